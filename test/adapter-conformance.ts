import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type RequestListener,
  Server,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  DedupeStore,
  Notification,
  NotificationHandler,
  NotificationQueue,
  QueuedNotification,
} from '@payhook/core';
import { SignatureError, WebhookError } from '@payhook/core';
import type { MiddlewareOptions } from '@payhook/core/adapter';
import { encodeBase64Url } from '@payhook/core/adapter';
import request from 'supertest';
import { expect, it } from 'vitest';
import { purchase } from '../examples/shared/src/deliveries.ts';
import { close, listen, postExpectingContinue } from './support/expect-continue.ts';
import { encodeForm, envelope, FORM, signedData, signedForm } from './support/signed-form.ts';

/**
 * Shared by every adapter's tests (`packages/<adapter>/src/index.test.ts`): the answers of docs/errors.md must not
 * depend on the framework, its version or the body parsers in front of the middleware.
 */

/** An app supertest can send to: a request listener (an Express app, a Koa app's callback) or a server. */
export type App = RequestListener | Server;

/**
 * Builds an app with the webhook middleware mounted at `/webhooks`. It may be async (a Fastify app is ready only
 * after `await app.ready()`); a returned server is closed by supertest after each request.
 */
export type BuildApp = (options: MiddlewareOptions<unknown>) => App | Promise<App>;

export const SECRET = 'conformance-secret';
export const MAX_BODY_BYTES = 4096;

const JSON_TYPE = 'application/json; charset=utf-8';

function reason(code: string): { ok: false; error: { code: string; message: string } } {
  return {
    ok: false,
    error: { code, message: expect.stringContaining('[@payhook/core]') as unknown as string },
  };
}

function failingStore(): DedupeStore {
  const fail = () => Promise.reject(new Error('connection refused'));
  return { name: 'failing', claim: fail, renew: fail, commit: fail, release: fail };
}

/**
 * Every status core answers, through one adapter and body parser: the same requests must give the same status,
 * code, headers and body whatever the framework did to the request first.
 */
export function itAnswersEveryStatus(build: BuildApp): void {
  const handled: Notification[] = [];
  const app = (options: Partial<MiddlewareOptions<unknown>> = {}) => {
    handled.length = 0;
    return build({
      secret: SECRET,
      maxBodyBytes: MAX_BODY_BYTES,
      logger: false,
      handle: (notification) => {
        handled.push(notification);
      },
      ...options,
    });
  };

  it('answers 200 handled to a signed form delivery, then 200 duplicate to its redelivery', async () => {
    const server = await app();
    const body = signedForm(purchase(), SECRET);
    const first = await request(server).post('/webhooks').type(FORM).send(body);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe(JSON_TYPE);
    expect(first.text).toBe('{"ok":true,"outcome":"handled"}');
    const again = await request(server).post('/webhooks').type(FORM).send(body);
    expect(again.status).toBe(200);
    expect(again.text).toBe('{"ok":true,"outcome":"duplicate"}');
    expect(handled.map((n) => [n.order_id, n.method, n.status])).toEqual([
      ['order-1001', 'purchase', 'success'],
    ]);
  });

  it('answers 200 handled to the same delivery sent as JSON', async () => {
    const res = await request(await app())
      .post('/webhooks')
      .set('content-type', 'application/json')
      .send(JSON.stringify(envelope(purchase(), SECRET)));
    expect([res.status, res.text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
    expect(handled).toHaveLength(1);
  });

  it.each([
    ['payload.field_missing', FORM, encodeForm({ data: encodeBase64Url('{}') })],
    ['payload.field_repeated', FORM, `${signedForm(purchase(), SECRET)}&signature=x`],
    ['payload.malformed', 'application/json', '{"data": "abc", "signature":'],
    ['data.encoding_invalid', FORM, signedData('not*base64url!', SECRET)],
    ['data.json_invalid', FORM, signedData(encodeBase64Url('not json'), SECRET)],
    ['notification.invalid', FORM, signedForm({ method: 'purchase', status: 'success' }, SECRET)],
  ])('answers 400 %s', async (code, type, body) => {
    const res = await request(await app())
      .post('/webhooks')
      .set('content-type', type)
      .send(body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(res.body).toMatchObject(reason(code));
    expect(handled).toEqual([]);
  });

  it('answers 200 handled to a form whose field names are percent-encoded, as form parsers decode them', async () => {
    const { data, signature } = envelope(purchase(), SECRET);
    const res = await request(await app())
      .post('/webhooks')
      .type(FORM)
      .send(`%64%61%74%61=${data}&%73ignature=${encodeURIComponent(signature)}`);
    expect([res.status, res.text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
    expect(handled).toHaveLength(1);
  });

  it.each([
    ['data[a]=1 beside a signed delivery', (body: string) => `${body}&data[a]=1`],
    ['data[a]=1 in place of data', (body: string) => body.replace('data=', 'data[a]=')],
  ])('answers 400 payload.malformed to %s, whatever the form parser', async (_, change) => {
    const res = await request(await app())
      .post('/webhooks')
      .type(FORM)
      .send(change(signedForm(purchase(), SECRET)));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject(reason('payload.malformed'));
    expect(handled).toEqual([]);
  });

  it('answers 401 signature.invalid when the data was changed after signing', async () => {
    const { signature } = envelope(purchase(), SECRET);
    const { data } = envelope(purchase({ amount: 1 }), SECRET);
    const res = await request(await app())
      .post('/webhooks')
      .type(FORM)
      .send(encodeForm({ data, signature }));
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject(reason('signature.invalid'));
    expect(handled).toEqual([]);
  });

  it('answers 403 sender.forbidden when the peer is not in allowedSenders', async () => {
    const res = await request(await app({ allowedSenders: ['35.187.74.148'] }))
      .post('/webhooks')
      .type(FORM)
      .send(signedForm(purchase(), SECRET));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject(reason('sender.forbidden'));
  });

  it('answers 405 with Allow: POST to a GET', async () => {
    const res = await request(await app()).get('/webhooks');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.body).toMatchObject(reason('request.method_not_allowed'));
  });

  it('answers 409 notification.in_flight while another copy holds the claim', async () => {
    const busy: DedupeStore = {
      name: 'busy',
      claim: () => ({ status: 'in_flight' }),
      renew: () => true,
      commit: () => undefined,
      release: () => undefined,
    };
    const res = await request(await app({ store: busy, inFlightWaitMs: 0 }))
      .post('/webhooks')
      .type(FORM)
      .send(signedForm(purchase(), SECRET));
    expect(res.status).toBe(409);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toMatchObject(reason('notification.in_flight'));
    expect(handled).toEqual([]);
  });

  it('runs the handler once for concurrent copies of one notification, each answered 200 or 409', async () => {
    let runs = 0;
    const server = await listening(
      await app({
        inFlightWaitMs: 0,
        handle: async (notification) => {
          runs++;
          handled.push(notification);
          await new Promise((resolve) => setTimeout(resolve, 150));
        },
      }),
    );
    try {
      const body = signedForm(purchase(), SECRET);
      const copies = await Promise.all(
        Array.from({ length: 8 }, () => request(server.url).post('/webhooks').type(FORM).send(body)),
      );
      const answers = copies.map((res) => `${res.status} ${res.body.outcome ?? res.body.error?.code}`);
      expect(answers.filter((answer) => answer === '200 handled')).toHaveLength(1);
      for (const answer of answers) {
        expect(['200 handled', '200 duplicate', '409 notification.in_flight']).toContain(answer);
      }
      const after = await request(server.url).post('/webhooks').type(FORM).send(body);
      expect(after.text).toBe('{"ok":true,"outcome":"duplicate"}');
      expect(runs).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('answers 413 payload.too_large with Connection: close above maxBodyBytes', async () => {
    const body = signedForm(purchase({ description: 'x'.repeat(MAX_BODY_BYTES) }), SECRET);
    const res = await request(await app())
      .post('/webhooks')
      .type(FORM)
      .send(body);
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(res.body).toMatchObject(reason('payload.too_large'));
  });

  it('answers 415 media_type.unsupported to text/plain', async () => {
    const res = await request(await app())
      .post('/webhooks')
      .set('content-type', 'text/plain')
      .send('hello');
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject(reason('media_type.unsupported'));
  });

  it('answers 500 handler.failed when the handler throws, then 200 handled to the redelivery', async () => {
    let calls = 0;
    const server = await app({
      handle: () => {
        calls++;
        if (calls === 1) throw new Error('database down');
      },
    });
    const body = signedForm(purchase(), SECRET);
    const failed = await request(server).post('/webhooks').type(FORM).send(body);
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject(reason('handler.failed'));
    const redelivered = await request(server).post('/webhooks').type(FORM).send(body);
    expect([redelivered.status, redelivered.text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
    expect(calls).toBe(2);
  });

  it('answers 503 store.unavailable with Retry-After when the store fails, without running the handler', async () => {
    const res = await request(await app({ store: failingStore() }))
      .post('/webhooks')
      .type(FORM)
      .send(signedForm(purchase(), SECRET));
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toMatchObject(reason('store.unavailable'));
    expect(handled).toEqual([]);
  });
}

/** One request a test sends to `/webhooks`, by name, and the answer as `[status, code or outcome]`. */
export interface Probe {
  readonly name: string;
  readonly type: string;
  readonly body: string;
}

/** The refusal code, or the outcome of a success, of one answer. */
export type Answer = [status: number, codeOrOutcome: string];

/**
 * Deliveries of growing size and a malformed one, around a body parser's smaller limit: `small` fits any
 * parser; `medium` is over `parserLimit` but under `MAX_BODY_BYTES`; `large` is over both.
 */
export function probesAround(parserLimit: number): Probe[] {
  const sized = (bytes: number) => signedForm(purchase({ description: 'x'.repeat(bytes) }), SECRET);
  return [
    { name: 'small', type: FORM, body: signedForm(purchase(), SECRET) },
    { name: 'medium', type: FORM, body: sized(parserLimit + 200) },
    { name: 'large', type: FORM, body: sized(MAX_BODY_BYTES + 200) },
    { name: 'malformed JSON', type: 'application/json', body: '{"data":' },
    { name: 'text', type: 'text/plain', body: 'hello' },
  ];
}

/** Posts each probe to `/webhooks` of a fresh app and collects the answers by probe name. */
export async function answersTo(
  build: () => App | Promise<App>,
  probes: Probe[],
): Promise<Record<string, Answer>> {
  const answers: Record<string, Answer> = {};
  for (const probe of probes) {
    const res = await request(await build())
      .post('/webhooks')
      .set('content-type', probe.type)
      .send(probe.body);
    const body = res.body as { outcome?: string; error?: { code: string } };
    answers[probe.name] = [res.status, body.error?.code ?? body.outcome ?? res.text.slice(0, 40)];
  }
  return answers;
}

/** The options every extra test uses: the conformance secret and limit, no logging, and a handler. */
export function testOptions<C>(
  handle: (notification: Notification, context: C | undefined) => void,
): MiddlewareOptions<C> {
  return { secret: SECRET, maxBodyBytes: MAX_BODY_BYTES, logger: false, handle };
}

/** What core answers to `probesAround(limit)` with no body parser in front. */
export const ANSWERS_WITHOUT_PARSER: Record<string, Answer> = {
  small: [200, 'handled'],
  medium: [200, 'handled'],
  large: [413, 'payload.too_large'],
  'malformed JSON': [400, 'payload.malformed'],
  text: [415, 'media_type.unsupported'],
};

/** A delivery whose data was changed after signing: a 401 `signature.invalid`. */
export function tamperedForm(): string {
  const { signature } = envelope(purchase(), SECRET);
  return encodeForm({ data: envelope(purchase({ amount: 1 }), SECRET).data, signature });
}

/** Asserts that the framework's error flow got exactly one error: core's `signature.invalid`, as it is. */
export function expectForwardedSignatureError(seen: unknown[]): void {
  expect(seen).toHaveLength(1);
  expect(seen[0]).toBeInstanceOf(SignatureError);
  expect(seen[0]).toBeInstanceOf(WebhookError);
  expect(seen[0]).toMatchObject({ status: 401, expose: true, code: 'signature.invalid' });
}

/**
 * A body that stops arriving: 408 `payload.timeout` once `readTimeoutMs` passed. Only where payhook itself reads
 * the request (no body parser in front: the parsers have no read timeout of their own).
 */
export function itAnswersTimeout(build: BuildApp): void {
  it('answers 408 payload.timeout with Connection: close when the body stalls past readTimeoutMs', async () => {
    const app = await build({ secret: SECRET, readTimeoutMs: 50, logger: false });
    const server = app instanceof Server ? app : createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const headers = { 'content-type': FORM, 'content-length': '500' };
    const stalled = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/webhooks', headers });
    try {
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        stalled.on('response', resolve).on('error', reject);
        stalled.write('data=eyJwYXltZW50X2lkIjo');
      });
      const chunks: Buffer[] = [];
      for await (const chunk of response) chunks.push(chunk as Buffer);
      expect([response.statusCode, response.headers.connection]).toEqual([408, 'close']);
      expect(JSON.parse(Buffer.concat(chunks).toString())).toMatchObject(reason('payload.timeout'));
    } finally {
      stalled.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
}

/**
 * A JSON envelope with `data` twice: 400 `payload.field_repeated`, as the form. Only where payhook reads the JSON
 * bytes: a JSON body parser that keeps no text hands on the last value only (docs/errors.md).
 */
export function itRefusesRepeatedJsonFields(build: BuildApp): void {
  it('answers 400 payload.field_repeated to a JSON envelope with data twice', async () => {
    const handled: Notification[] = [];
    const server = await build({
      secret: SECRET,
      logger: false,
      handle: (notification) => {
        handled.push(notification);
      },
    });
    const { data, signature } = envelope(purchase(), SECRET);
    const res = await request(server)
      .post('/webhooks')
      .set('content-type', 'application/json')
      .send(`{"data":"e30","data":${JSON.stringify(data)},"signature":${JSON.stringify(signature)}}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject(reason('payload.field_repeated'));
    expect(handled).toEqual([]);
  });
}

/**
 * `Expect: 100-continue` on a server passed through core's `deferContinue`, as each adapter's README shows: a
 * declared length over `maxBodyBytes` is answered 413 before Node could send `100 Continue`; a delivery that fits
 * is invited, then handled. `build` returns that server, not listening.
 */
export function itDefersContinue(build: (options: MiddlewareOptions<unknown>) => Promise<Server>): void {
  const serve = async () => {
    const handled: Notification[] = [];
    const server = await build({
      secret: SECRET,
      maxBodyBytes: MAX_BODY_BYTES,
      logger: false,
      handle: (notification) => {
        handled.push(notification);
      },
    });
    return { server: await listen(server), handled };
  };

  it('answers 413 payload.too_large to Expect: 100-continue with a length over maxBodyBytes, never 100 Continue', async () => {
    const { server, handled } = await serve();
    try {
      const { received, continued } = await postExpectingContinue(
        server,
        '/webhooks',
        FORM,
        '',
        MAX_BODY_BYTES + 1,
      );
      expect(continued).toBe(false);
      expect(received.slice(0, received.indexOf('\r\n'))).toBe('HTTP/1.1 413 Payload Too Large');
      expect(received).not.toContain('100 Continue');
      expect(received).toContain('"code":"payload.too_large"');
      expect(handled).toEqual([]);
    } finally {
      await close(server);
    }
  });

  it('sends 100 Continue to Expect: 100-continue within maxBodyBytes, then handles the delivery', async () => {
    const { server, handled } = await serve();
    try {
      const body = signedForm(purchase(), SECRET);
      const { received, continued } = await postExpectingContinue(server, '/webhooks', FORM, body);
      expect(continued).toBe(true);
      expect(received).toContain('\r\n\r\nHTTP/1.1 200 OK\r\n');
      expect(received.endsWith('{"ok":true,"outcome":"handled"}')).toBe(true);
      expect(handled).toHaveLength(1);
    } finally {
      await close(server);
    }
  });
}

/** The handlers `itRunsInlineHandlersInTheRequest` hands its `build` to register: two `{ inline: true }`, one not. */
export interface InlineHandlers {
  /** Register with `.on('purchase', inline, { inline: true })` (Nest: `@OnNotification('purchase', { inline: true })`). */
  inline: NotificationHandler<Notification, unknown>;
  /** Register with `.onAny(inlineAny, { inline: true })` (Nest: `@OnAnyNotification({ inline: true })`). */
  inlineAny: NotificationHandler<Notification, unknown>;
  /** Register with `.on('purchase', queued)`: it is the queue's. */
  queued: NotificationHandler<Notification, unknown>;
}

/**
 * The per-handler option through an adapter, as on core's handler: with `queue`, the handlers registered
 * `{ inline: true }` (by `.on` and by `.onAny`) run in the request and the others are queued once they committed,
 * 200 `handled+queued`. An adapter that drops the option queues every handler: 200 `queued`.
 */
export function itRunsInlineHandlersInTheRequest(
  build: (options: MiddlewareOptions<unknown>, handlers: InlineHandlers) => App | Promise<App>,
): void {
  it('runs the handlers registered { inline: true } in the request and queues the others: 200 handled+queued', async () => {
    const ran: string[] = [];
    const jobs: QueuedNotification[] = [];
    const queue: NotificationQueue = {
      enqueue: async (job) => {
        jobs.push(job);
        return 'queued';
      },
    };
    const server = await build(
      { secret: SECRET, logger: false, queue },
      {
        inline: (notification) => void ran.push(`inline ${notification.order_id}`),
        inlineAny: (notification) => void ran.push(`inline any ${notification.order_id}`),
        queued: (notification) => void ran.push(`queued ${notification.order_id}`),
      },
    );
    const res = await request(server).post('/webhooks').type(FORM).send(signedForm(purchase(), SECRET));
    expect([res.status, res.text]).toEqual([200, '{"ok":true,"outcome":"handled+queued"}']);
    expect(ran.sort()).toEqual(['inline any order-1001', 'inline order-1001']);
    expect(jobs.map((job) => job.data.order_id)).toEqual(['order-1001']);
  });
}

/** Listens on a free loopback port, for tests that need one server across concurrent requests. */
async function listening(app: App): Promise<{ url: string; close: () => Promise<void> }> {
  const server = app instanceof Server ? app : createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
