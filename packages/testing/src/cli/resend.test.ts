import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../fake/outcomes.js';
import { type FakeServer, startFakeServer } from '../server.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const secret = 'resend-secret';

describe('payhook resend (spec 4.3, 4.4) against payhook serve', () => {
  let fake: FakeServer;
  let merchant: Server;
  const handled: string[] = [];

  beforeAll(async () => {
    const webhook = createWebhookHandler<IncomingMessage>({
      secret,
      logger: false,
      handle: (n) => void handled.push(`${n.order_id} ${n.status}`),
    });
    merchant = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
    fake = await startFakeServer({ secret, seed: 9, now: '2026-05-01T08:00:00Z' });
    const { project } = fake.fake;
    fake.fake.createPayment({
      pos_id: project.posId,
      mode: 'direct',
      method: 'purchase',
      amount: 9.99,
      currency: 'XTS',
      description: 'Tea',
      order_id: 'order-resend',
      cc_number: TEST_CARDS.success,
      exp_month: 12,
      exp_year: 2030,
      card_cvv: '123',
      server_url: `http://127.0.0.1:${(merchant.address() as AddressInfo).port}/webhooks`,
    });
    await fake.fake.idle();
  });
  afterAll(async () => {
    await fake.close();
    await new Promise((resolve) => merchant.close(resolve));
  });

  const resend = (...args: string[]) => {
    const { project } = fake.fake;
    const { io, out, err } = memoryIO('', {
      PAYHOOK_API_KEY: project.apiKey,
      PAYHOOK_ENDPOINTS_KEY: project.endpointsKey,
      // The fake checks it: the HMAC of the empty body of a GET, keyed with the project's secret.
      PAYHOOK_API_SIGNATURE: createHmac('sha256', secret).update('').digest('hex'),
    });
    return runCli(['resend', '--base-url', fake.url, '--pos-id', project.posId, ...args], io).then(
      (code) => ({
        code,
        out,
        err,
      }),
    );
  };

  it('asks for the webhook again, prints the record answered, and the receiver gets it once more', async () => {
    const { code, out } = await resend('--order', 'order-resend');
    expect(code).toBe(0);
    expect(out[0]).toBe(
      `GET ${fake.url}/api/v1/pos/${fake.fake.project.posId}/orders/order-resend/purchase?callback=true`,
    );
    expect(out[1]).toMatch(/^200 \{.*"order_id":"order-resend".*"status":"success"/);
    await fake.fake.idle();
    expect(handled).toEqual(['order-resend success']);
    expect(fake.fake.deliveries.map((d) => d.body)).toEqual([
      '{"ok":true,"outcome":"handled"}',
      '{"ok":true,"outcome":"duplicate"}',
    ]);
  });

  it('exits 1 with the service answer for an unknown order or transaction, 2 without the keys', async () => {
    const unknown = await resend('--order', 'order-resend', '--transaction-id', 'nope');
    expect([unknown.code, unknown.out[1]]).toEqual([
      1,
      '404 {"message":"No transaction with this transactionId on this order.","args":{"code":"N-404"}}',
    ]);
    const { io, err } = memoryIO();
    expect(await runCli(['resend', '--base-url', fake.url, '--pos-id', 'p', '--order', 'o'], io)).toBe(2);
    expect(err[0]).toBe('payhook resend: --api-key is required (or set PAYHOOK_API_KEY).');
  });
});

describe('payhook resend: the X-API-AUTH it sends', () => {
  const seen: Array<string | undefined> = [];
  let service: Server;
  let url: string;

  beforeAll(async () => {
    service = createServer((request, response) => {
      seen.push(request.headers['x-api-auth'] as string | undefined);
      if (request.url?.includes('/orders/echo/')) {
        const { 'x-api-auth': auth, 'x-api-key': key } = request.headers;
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            message: `Invalid credentials: X-API-AUTH=${auth} key=${key}`,
            args: { code: 'S-404' },
          }),
        );
      } else if (request.url?.includes('/orders/endless/')) {
        response.writeHead(500, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(65_536);
        const write = () => {
          while (response.write(chunk)) {}
          response.once('drain', write);
        };
        response.on('close', () => response.removeAllListeners('drain'));
        write();
      } else response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => service.close(resolve));
  });

  const resend = (env: Record<string, string>, ...args: string[]) => {
    const { io, out, err } = memoryIO('', { PAYHOOK_API_KEY: 'ak', PAYHOOK_ENDPOINTS_KEY: 'ek', ...env });
    const argv = ['resend', '--base-url', url, '--pos-id', 'p', '--order', 'o-1', ...args];
    return runCli(argv, io).then((code) => ({ code, out, err }));
  };

  it('sends --auth-scheme or PAYHOOK_AUTH_SCHEME, SVC by default, and signs with PAYHOOK_API_SECRET', async () => {
    seen.length = 0;
    const emptyBody = createHmac('sha256', 'api-secret').update('').digest('hex');
    expect((await resend({ PAYHOOK_API_SECRET: 'api-secret' }, '--auth-scheme', 'ABCD')).code).toBe(0);
    expect(
      (await resend({ PAYHOOK_API_SIGNATURE: 'sig', PAYHOOK_AUTH_SCHEME: 'WXYZ-HMAC-SHA256' })).code,
    ).toBe(0);
    expect((await resend({ PAYHOOK_API_SIGNATURE: 'sig' })).code).toBe(0);
    expect(seen).toEqual([
      `ABCD-HMAC-SHA256 ak:${emptyBody}`,
      'WXYZ-HMAC-SHA256 ak:sig',
      'SVC-HMAC-SHA256 ak:sig',
    ]);
  });

  it("prints the service's answer with every credential it echoes redacted", async () => {
    const { code, out } = await resend(
      {
        PAYHOOK_API_KEY: 'ak-visible-key',
        PAYHOOK_ENDPOINTS_KEY: 'ek-visible-key',
        PAYHOOK_API_SECRET: 'api-secret',
      },
      '--order',
      'echo',
    );
    expect(code).toBe(1);
    const printed = out.join('\n');
    expect(printed).toContain('401 {"message":"Invalid credentials: [redacted] key=[redacted]"');
    const signature = createHmac('sha256', 'api-secret').update('').digest('hex');
    for (const secretText of ['ak-visible-key', 'ek-visible-key', 'api-secret', signature]) {
      expect(printed).not.toContain(secretText);
    }
  });

  it('stops reading an answer that never ends at 1 MiB', async () => {
    const { code, out } = await resend({ PAYHOOK_API_SIGNATURE: 'sig' }, '--order', 'endless');
    expect(code).toBe(1);
    expect(out.at(-1)?.length).toBe('500 '.length + 1_048_576);
  });

  it.each([
    [
      ['--auth-scheme', 'A B'],
      `--auth-scheme (or PAYHOOK_AUTH_SCHEME) must be a word of letters, digits and '-', not "A B".`,
    ],
    [['--order', '..'], "--order .. cannot be sent: URL normalisation removes a '.' or '..' path segment."],
  ])('exits 2 before any request on %j', async (args, message) => {
    seen.length = 0;
    const { code, err } = await resend({ PAYHOOK_API_SIGNATURE: 'sig' }, ...args);
    expect([code, err[0], seen]).toEqual([2, `payhook resend: ${message}`, []]);
  });
});
