import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../fake/outcomes.js';
import { type FakeServer, startFakeServer } from '../server.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const secret = 'operation-cli-secret';

describe('payhook operation against payhook serve', () => {
  let fake: FakeServer;
  let merchant: Server;
  const handled: string[] = [];

  beforeAll(async () => {
    const webhook = createWebhookHandler<IncomingMessage>({
      secret,
      logger: false,
      handle: (n) => void handled.push(`${n.order_id} ${n.method} ${n.amount}`),
    });
    merchant = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
    fake = await startFakeServer({ secret, seed: 11, now: '2026-05-01T08:00:00Z' });
    const serverUrl = `http://127.0.0.1:${(merchant.address() as AddressInfo).port}/webhooks`;
    for (const [order_id, method, amount] of [
      ['cli-auth', 'auth', 100],
      ['cli-void', 'auth', 30],
      ['cli-split', 'auth', 50],
    ] as const) {
      fake.fake.createPayment({
        pos_id: fake.fake.project.posId,
        mode: 'direct',
        method,
        amount,
        currency: 'XTS',
        description: 'Tea',
        order_id,
        customer_ip: '10.0.0.7',
        cc_number: TEST_CARDS.success,
        exp_month: 12,
        exp_year: 2030,
        card_cvv: '123',
        server_url: serverUrl,
      });
    }
    await fake.fake.idle();
  });
  afterAll(async () => {
    await fake.close();
    await new Promise((resolve) => merchant.close(resolve));
  });

  const operation = async (...args: string[]) => {
    const { project } = fake.fake;
    const { io, out, err } = memoryIO('', {
      PAYHOOK_API_KEY: project.apiKey,
      PAYHOOK_ENDPOINTS_KEY: project.endpointsKey,
      PAYHOOK_API_SECRET: secret,
    });
    const code = await runCli(['operation', ...args, '--base-url', fake.url, '--pos-id', project.posId], io);
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('captures, refunds, voids, split-captures and lists the order, each webhook handled once', async () => {
    const capture = await operation('capture', '--order', 'cli-auth', '--amount', '60', '--currency', 'XTS');
    expect(capture.code).toBe(0);
    expect(JSON.parse(capture.out)).toMatchObject({ method: 'capture', amount: 60, status: 'success' });
    const refund = await operation(
      'refund',
      '--order',
      'cli-auth',
      '--amount',
      '20',
      '--currency',
      'XTS',
      '--auth-form',
      'secret',
    );
    expect(JSON.parse(refund.out)).toMatchObject({ method: 'refund', amount: 20, status_code: '1004' });
    const voided = await operation(
      'void',
      '--order',
      'cli-void',
      '--currency',
      'XTS',
      '--comment',
      'out of stock',
    );
    expect(JSON.parse(voided.out)).toMatchObject({ method: 'void', amount: 30 });
    const split = JSON.stringify([{ amount: 50, sub_merchant_id: '0b9f3c1e-6a2d-4f7b-8c5e-3d1a9b7c5e20' }]);
    const splitCapture = await operation(
      'split-capture',
      '--order',
      'cli-split',
      '--amount',
      '50',
      '--currency',
      'XTS',
      '--split',
      split,
    );
    expect(JSON.parse(splitCapture.out)).toMatchObject({ method: 'capture', amount: 50 });
    const status = await operation('status', '--order', 'cli-auth');
    expect((JSON.parse(status.out) as Array<{ method: string }>).map((o) => o.method)).toEqual([
      'auth',
      'capture',
      'refund',
    ]);
    await fake.fake.idle();
    expect(handled.filter((h) => !h.endsWith(' auth 100') && !/ auth (30|50)$/.test(h)).sort()).toEqual(
      ['cli-auth capture 60', 'cli-auth refund 20', 'cli-split capture 50', 'cli-void void 30'].sort(),
    );
  });

  it('exits 1 with the code and no credential when the call fails; 2 on a usage error', async () => {
    const over = await operation('refund', '--order', 'cli-auth', '--amount', '500', '--currency', 'XTS');
    expect(over.code).toBe(1);
    expect(over.err).toMatch(
      /^payhook operation: api\.amount_exceeded: \[@payhook\/payments\] POST \/api\/v1\/refund not sent/,
    );
    const unknown = await operation('status', '--order', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('api.not_found');
    for (const text of [over.err, unknown.err]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(fake.fake.project.endpointsKey);
    }
    const usage = await operation('settle', '--order', 'x');
    expect([usage.code, usage.err]).toEqual([
      2,
      "payhook operation: name one operation: capture, void, refund, split-capture, status.\nRun 'payhook operation --help' for usage.",
    ]);
  });
});
