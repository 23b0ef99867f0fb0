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
      `nobody refund: failed — [@payhook/core] GET /api/v1/pos/${fake.fake.project.posId}/orders/nobody/refund?callback=true answered 404 (N-404: No such payment.): the service knows no such order.`,
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
