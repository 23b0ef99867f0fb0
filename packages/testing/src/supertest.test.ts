import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createNodeListener, createWebhookHandler, type WebhookHandlerOptions } from '@payhook/core';
import { sendNodeResponse, toWebhookRequest } from '@payhook/core/adapter';
import { createPaymentLedger } from '@payhook/payments';
import express from 'express';
import { Hono } from 'hono';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import {
  burst,
  createTestHandler,
  fakePurchase,
  fakeRefund,
  outOfOrder,
  postWebhook,
  redeliver,
  redeliverWithNewField,
  signWebhook,
  type TestHandler,
  type WebhookTarget,
} from './index.js';

const secret = 'test-secret';

function options(app: TestHandler): WebhookHandlerOptions<unknown> {
  return { secret, logger: false, handle: app.handle };
}

function expressApp(app: TestHandler) {
  const webhook = createWebhookHandler(options(app));
  const server = express();
  server.post('/webhooks', async (req, res) =>
    sendNodeResponse(res, await webhook(toWebhookRequest(req), req)),
  );
  return server;
}

function koaApp(app: TestHandler) {
  const webhook = createWebhookHandler(options(app));
  const server = new Koa();
  server.use(async (ctx) => {
    const result = await webhook(toWebhookRequest(ctx.req), ctx);
    ctx.status = result.status;
    ctx.set(result.headers);
    ctx.body = result.body;
  });
  return server;
}

function listener(app: TestHandler) {
  return createNodeListener(
    createWebhookHandler<IncomingMessage>({ secret, logger: false, handle: app.handle }),
  );
}

/** A Fetch handler over core: the Request's headers and raw text, the result as a Response. */
function fetchHandler(app: TestHandler) {
  const webhook = createWebhookHandler(options(app));
  return async (request: Request): Promise<Response> => {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const result = await webhook({ method: request.method, headers, body: await request.text() }, undefined);
    return new Response(result.body, { status: result.status, headers: result.headers });
  };
}

function honoApp(app: TestHandler) {
  const handle = fetchHandler(app);
  return new Hono().post('/webhooks', (c) => handle(c.req.raw));
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

const targets: [string, (app: TestHandler) => WebhookTarget][] = [
  ['an Express app', expressApp],
  ['a Koa app', koaApp],
  ['a plain request listener', listener],
  ['a Hono app (an object with a fetch method)', honoApp],
  [
    'a Fetch handler (request => app.fetch(request))',
    (app) => {
      const hono = honoApp(app);
      return (request: Request) => hono.fetch(request);
    },
  ],
  [
    'a Next.js-style route handler of two parameters, as { fetch }',
    (app) => {
      const handle = fetchHandler(app);
      const POST = (request: Request, _context: { params: Promise<object> }) => handle(request);
      return { fetch: (request: Request) => POST(request, { params: Promise.resolve({}) }) };
    },
  ],
  [
    'a node:http server',
    (app) => {
      const server = createServer(listener(app));
      servers.push(server);
      return server;
    },
  ],
];

describe.each(targets)('postWebhook to %s', (_name, make) => {
  it('handles a notification once and answers its redelivery as a duplicate', async () => {
    const app = createTestHandler();
    const target = make(app);
    const purchase = fakePurchase();
    const first = (await postWebhook(target, purchase, { secret })).expectHandled();
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ ok: true, outcome: 'handled' });
    (await postWebhook(target, redeliver(purchase), { secret })).expectDuplicate();
    (await postWebhook(target, redeliverWithNewField(purchase), { secret })).expectDuplicate();
    app.expectHandledOnce(purchase);
    app.expectHandledOnce(purchase.payment_id);
  });

  it('refuses a tampered delivery with 401 signature.invalid and never calls the handler', async () => {
    const app = createTestHandler();
    const purchase = fakePurchase();
    const res = (await postWebhook(make(app), purchase, { secret, variant: 'tampered' })).expectRefused(
      'signature.invalid',
    );
    expect(res.status).toBe(401);
    expect(res.errorCode).toBe('signature.invalid');
    app.expectNotHandled(purchase);
    expect(app.calls).toHaveLength(0);
  });
});

describe('postWebhook defaults and targets', () => {
  it('posts to /webhooks unless told otherwise, the path every doc and example mounts', async () => {
    const paths: string[] = [];
    const target = async (request: Request) => {
      paths.push(new URL(request.url).pathname);
      return new Response('{"ok":true,"outcome":"handled"}', { status: 200 });
    };
    await postWebhook(target, fakePurchase(), { secret });
    await postWebhook(target, fakePurchase(), { secret, path: '/hooks/pay' });
    expect(paths).toEqual(['/webhooks', '/hooks/pay']);
  });

  it('refuses a Fetch handler that does not return a Response, naming what to pass instead', async () => {
    const target = (() => 'not a response') as unknown as (request: Request) => Response;
    await expect(postWebhook(target, fakePurchase(), { secret })).rejects.toThrow(
      '[@payhook/testing] the Fetch handler did not return a Response: pass an (req, res) listener or an app.',
    );
  });
});

describe('postWebhook assertions', () => {
  it('throw plain Errors naming what was expected and what came back', async () => {
    const app = createTestHandler();
    const target = listener(app);
    const refused = await postWebhook(target, fakePurchase(), { secret, variant: 'wrongSecret' });
    expect(() => refused.expectHandled()).toThrowError(
      /^\[@payhook\/testing\] POST \/webhooks \(wrongSecret\): expected 200 with outcome "handled", got 401 \{"ok":false,"error":\{"code":"signature.invalid"/,
    );
    const handled = await postWebhook(target, fakePurchase(), { secret });
    expect(() => handled.expectRefused('signature.invalid')).toThrowError(
      '[@payhook/testing] POST /webhooks (exact): expected 401 with error code "signature.invalid", got 200 {"ok":true,"outcome":"handled"}',
    );
    expect(() => handled.expectDuplicate()).toThrowError(/expected 200 with outcome "duplicate"/);
  });

  it('posts a SignedWebhook as it is', async () => {
    const app = createTestHandler();
    const signed = signWebhook(fakeRefund(), secret, { variant: 'json' });
    const res = (await postWebhook(listener(app), signed, { secret: 'ignored' })).expectHandled();
    expect(res.signed).toBe(signed);
  });

  it('posts to the URL of a live server', async () => {
    const app = createTestHandler();
    const server = createServer(listener(app));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const purchase = fakePurchase();
    (await postWebhook(`http://127.0.0.1:${port}`, purchase, { secret, path: '/hooks' })).expectHandled();
    app.expectHandledOnce(purchase);
  });

  it('refuses a wrong media type with 415', async () => {
    const app = createTestHandler();
    const signed = { ...signWebhook(fakePurchase(), secret), headers: { 'content-type': 'text/plain' } };
    (await postWebhook(listener(app), signed, { secret })).expectRefused('media_type.unsupported');
  });
});

describe('scenarios against core', () => {
  it('burst: of 8 concurrent copies exactly one is handled', async () => {
    const app = createTestHandler();
    const target = listener(app);
    const purchase = fakePurchase();
    const answers = await Promise.all(
      burst(purchase, 8).map((copy) => postWebhook(target, copy, { secret })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(answers.filter((a) => a.outcome === 'handled')).toHaveLength(1);
    expect(answers.filter((a) => a.outcome === 'duplicate')).toHaveLength(7);
    app.expectHandledOnce(purchase);
  });

  it('outOfOrder: with a ledger, the pending that arrives after success is stale', async () => {
    const app = createTestHandler();
    const webhook = createWebhookHandler<IncomingMessage>({ ...options(app), ledger: createPaymentLedger() });
    const target = createNodeListener(webhook);
    const [done, pending] = outOfOrder(fakePurchase());
    expect([done.status, pending.status]).toEqual(['success', 'pending']);
    (await postWebhook(target, done, { secret })).expectHandled();
    (await postWebhook(target, pending, { secret })).expectOutcome('stale');
    app.expectHandledOnce(done);
    app.expectNotHandled(pending);
  });

  it('a failing handler is retried: the redelivery after a 500 is handled', async () => {
    const app = createTestHandler();
    const target = listener(app);
    const purchase = fakePurchase();
    app.failNext();
    (await postWebhook(target, purchase, { secret })).expectRefused('handler.failed');
    expect(app.countHandled(purchase)).toBe(0);
    (await postWebhook(target, redeliver(purchase), { secret })).expectHandled();
    expect(app.calls.map((c) => c.failed)).toEqual([true, false]);
    app.expectHandledOnce(purchase);
  });

  it('burst refuses a count below 1', () => {
    expect(() => burst(fakePurchase(), 0)).toThrowError(RangeError);
  });
});

describe('createTestHandler', () => {
  it('expectHandledOnce names the recorded calls when it fails', async () => {
    const app = createTestHandler();
    expect(() => app.expectHandledOnce('missing-id')).toThrowError(
      '[@payhook/testing] expected id missing-id to be handled exactly once, but it was handled 0 times; no calls were recorded.',
    );
    const purchase = fakePurchase();
    await postWebhook(listener(app), purchase, { secret });
    app.reset();
    expect(app.calls).toHaveLength(0);
  });
});

describe('postWebhook: a target it cannot post to', () => {
  it('names what it takes instead of failing inside supertest', async () => {
    await expect(
      postWebhook({ listen() {} } as unknown as WebhookTarget, fakePurchase(), { secret }),
    ).rejects.toThrow(
      '[@payhook/testing] postWebhook cannot post to this object: pass an Express or Koa app, a Fastify app, a NestJS app, a node:http server, a (req, res) listener, a Fetch handler or a URL.',
    );
  });
});
