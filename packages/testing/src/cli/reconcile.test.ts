import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../fake/outcomes.js';
import { type FakeServer, startFakeServer } from '../server.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const secret = 'reconcile-cli-secret';

describe('payhook reconcile against payhook serve', () => {
  let fake: FakeServer;
  let merchant: Server;
  let dir: string;
  const handled: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'payhook-reconcile-'));
    const webhook = createWebhookHandler<IncomingMessage>({
      secret,
      logger: false,
      handle: (n) => void handled.push(`${n.order_id} ${n.status}`),
    });
    merchant = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
    fake = await startFakeServer({ secret, apiSecret: 'api-secret', seed: 12, now: '2026-05-01T08:00:00Z' });
    fake.fake.setDeliveryFaults({ drop: true });
    for (const orderId of ['lost-1', 'lost-2']) {
      fake.fake.createPayment({
        pos_id: fake.fake.project.posId,
        mode: 'direct',
        method: 'purchase',
        amount: 9.99,
        currency: 'XTS',
        description: 'Tea',
        order_id: orderId,
        cc_number: TEST_CARDS.success,
        exp_month: 12,
        exp_year: 2030,
        card_cvv: '123',
        server_url: `http://127.0.0.1:${(merchant.address() as AddressInfo).port}/webhooks`,
      });
    }
    fake.fake.setDeliveryFaults({});
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await fake.close();
    await new Promise((resolve) => merchant.close(resolve));
  });

  const reconcile = (input: string, env: Record<string, string>, ...args: string[]) => {
    const { project } = fake.fake;
    const { io, out, err } = memoryIO(input, env);
    const argv = ['reconcile', '--base-url', fake.url, '--pos-id', project.posId];
    argv.push('--api-key', project.apiKey, '--endpoints-key', project.endpointsKey, ...args);
    return runCli(argv, io).then((code) => ({ code, out, err }));
  };

  it('re-sends every order read from stdin: one line each, a summary, exit 1 for the unknown one', async () => {
    const input = '# waiting since this morning\nlost-1\n\nlost-2 purchase\nnobody refund\n';
    const { code, out, err } = await reconcile(input, { PAYHOOK_API_SECRET: 'api-secret' });
    expect(err).toEqual([]);
    expect(out).toEqual([
      'lost-1 purchase: requested (payment success)',
      'lost-2 purchase: requested (payment success)',
      `nobody refund: failed — [@payhook/payments] GET /api/v1/pos/${fake.fake.project.posId}/orders/nobody/refund?callback=true answered 404 (N-404: No such payment.): the service knows no such order.`,
      '3 order(s): 2 requested, 0 still pending, 1 failed.',
    ]);
    expect(code).toBe(1);
    await fake.fake.idle();
    expect(handled).toEqual(['lost-1 success', 'lost-2 success']);
    expect(out.join('\n')).not.toContain('api-secret');
  });

  it('reads --orders FILE and exits 0 when every order was requested', async () => {
    const file = join(dir, 'orders.txt');
    writeFileSync(file, 'lost-1\n');
    const { code, out } = await reconcile(
      '',
      { PAYHOOK_API_SIGNATURE: createHmac('sha256', 'api-secret').update('').digest('hex') },
      '--orders',
      file,
    );
    expect([code, out.at(-1)]).toEqual([0, '1 order(s): 1 requested, 0 still pending, 0 failed.']);
  });

  it.each([
    ['', { PAYHOOK_API_SECRET: 's' }, 'payhook reconcile: no orders: one order_id per line.'],
    [
      'o-1\n',
      {},
      'payhook reconcile: no request signature: set PAYHOOK_API_SECRET (HMAC-SHA256), or pass --signature S (or PAYHOOK_API_SIGNATURE).',
    ],
    [
      'o-1 purchase tx extra\n',
      { PAYHOOK_API_SECRET: 's' },
      "payhook reconcile: line 1: expected 'order_id [operation [transaction_id]]' with a word for operation.",
    ],
    [
      'o-1 ../payment\n',
      { PAYHOOK_API_SECRET: 's' },
      "payhook reconcile: line 1: expected 'order_id [operation [transaction_id]]' with a word for operation.",
    ],
  ])('exits 2 on a usage error: %j', async (input, env, message) => {
    const { code, err } = await reconcile(input, env);
    expect([code, err[0]]).toEqual([2, message]);
  });
});

describe('payhook reconcile against a service that echoes the credentials it got', () => {
  const credentials = { apiKey: 'AK_live_7Qx2', endpointsKey: 'EK_live_9Zr4', secret: 'secret-3e1f-never' };
  const signature = createHmac('sha256', credentials.secret).update('').digest('hex');
  let service: Server;
  let url: string;

  beforeAll(async () => {
    service = createServer((request, response) => {
      const auth = String(request.headers['x-api-auth']);
      const message = `Invalid credentials: X-API-AUTH=${auth} X-API-KEY=${request.headers['x-api-key']} (secret ${credentials.secret})`;
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message, args: { code: auth.split(':')[1] } }));
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => service.close(resolve));
  });

  it('prints no key, signature or secret, and names the auth scheme it sent', async () => {
    const { io, out, err } = memoryIO('o-1\n', {
      PAYHOOK_API_SECRET: credentials.secret,
      PAYHOOK_AUTH_SCHEME: 'ABCD',
    });
    const argv = ['reconcile', '--base-url', url, '--pos-id', 'p-1', '--api-key', credentials.apiKey];
    const code = await runCli([...argv, '--endpoints-key', credentials.endpointsKey], io);
    expect([code, err]).toEqual([1, []]);
    expect(out).toEqual([
      'o-1 purchase: failed — [@payhook/payments] GET /api/v1/pos/p-1/orders/o-1/purchase?callback=true answered 401 ([redacted]: Invalid credentials: [redacted] [redacted] (secret [redacted])): the likely causes are authScheme (sent "ABCD") and the request signature (signRequest, or apiSecret for the default HMAC-SHA256 of the body); then check apiKey, endpointsKey and posId.',
      '1 order(s): 0 requested, 0 still pending, 1 failed.',
    ]);
    for (const secret of [credentials.apiKey, credentials.endpointsKey, credentials.secret, signature]) {
      expect(out.join('\n')).not.toContain(secret);
    }
  });
});
