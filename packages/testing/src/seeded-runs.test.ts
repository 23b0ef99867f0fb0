import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore } from '@payhook/core';
import { webhookMiddleware } from '@payhook/express';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_CARDS } from './fake/outcomes.js';
import { mockPaymentApi, type PaymentApiMock } from './nock.js';
import { startFakeServer } from './server.js';

const BASE_URL = 'https://api.payments.test';
const SECRET = 'seeded-runs-secret';

/** The merchant: one store for both runs, as Redis or PostgreSQL keeps it between two `vitest` runs. */
const store = new MemoryStore();
const handled: string[] = [];
let server: Server | undefined;
let api: PaymentApiMock | undefined;

async function startMerchant(): Promise<string> {
  const app = express();
  app.use(
    '/webhooks',
    webhookMiddleware({ secret: SECRET, store, logger: false }).on('purchase.success', (n) => {
      handled.push(n.payment_id);
    }),
  );
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** One test run: the README's seeded fake, one order paid, every webhook delivered. */
async function run(options: { fixedIds?: boolean }): Promise<{ paymentId: string; api: PaymentApiMock }> {
  const merchant = await startMerchant();
  api = mockPaymentApi({
    baseUrl: BASE_URL,
    secret: SECRET,
    now: '2026-03-02T10:00:00Z',
    seed: 42,
    ...options,
  });
  const response = await fetch(`${BASE_URL}/api/v1/payment`, {
    method: 'POST',
    headers: api.headers(),
    body: JSON.stringify({
      pos_id: api.project.posId,
      mode: 'direct',
      method: 'purchase',
      amount: 10,
      currency: 'UAH',
      description: 'Tea',
      order_id: 'order-1',
      cc_number: TEST_CARDS.success,
      exp_month: 12,
      exp_year: 2030,
      card_cvv: '123',
      server_url: `${merchant}/webhooks`,
    }),
  });
  const record = (await response.json()) as { payment_id: string };
  await api.fake.idle();
  return { paymentId: record.payment_id, api };
}

async function endRun(): Promise<void> {
  api?.restore();
  api = undefined;
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
}

afterEach(endRun);

describe('a seeded fake run twice against one store', () => {
  it('gets fresh ids on the second run by default: every webhook is handled again', async () => {
    const first = await run({});
    first.api.done();
    await endRun();
    const second = await run({});
    second.api.done();
    expect(second.paymentId).not.toBe(first.paymentId);
    expect(handled.slice(-2)).toEqual([first.paymentId, second.paymentId]);
  });

  it('with fixedIds, fails done() loudly when a first delivery is answered duplicate, with the cause and the fix', async () => {
    const first = await run({ fixedIds: true });
    first.api.done();
    await endRun();
    const count = handled.length;
    const second = await run({ fixedIds: true });
    expect(second.paymentId).toBe(first.paymentId);
    expect(handled).toHaveLength(count);
    expect(second.api.fake.deliveries.map((d) => [d.status, d.body])).toEqual([
      [200, '{"ok":true,"outcome":"duplicate"}'],
    ]);
    expect(second.api.isDone()).toBe(false);
    expect(() => second.api.done()).toThrow(
      `[@payhook/testing] fake payment API: webhook #1 (purchase success, order order-1, payment ${first.paymentId}) to ${second.api.fake.deliveries[0]!.url} was sent for the first time and answered "duplicate": the receiver's store remembers these ids from an earlier run (fixedIds: true, or a store kept between tests), so the application never handled it. Clear the store (or give each run its own key prefix), or drop fixedIds so each run gets fresh ids.`,
    );
  });

  it('does not count a re-send (spec 4.3) answered duplicate: the fake sent it before', async () => {
    const first = await run({});
    first.api.fake.resend(first.api.project.posId, 'order-1', 'purchase');
    await first.api.fake.idle();
    expect(first.api.fake.deliveries.map((d) => d.body)).toEqual([
      '{"ok":true,"outcome":"handled"}',
      '{"ok":true,"outcome":"duplicate"}',
    ]);
    first.api.done();
  });
});

describe('a seeded real fake server run twice against one store', () => {
  async function serverRun() {
    const merchant = await startMerchant();
    const fakeServer = await startFakeServer({ secret: SECRET, seed: 4242, fixedIds: true });
    const { project } = fakeServer.fake;
    await fetch(`${fakeServer.url}/api/v1/payment`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': `SVC ${project.apiKey}:${project.apiSecret}`,
        'x-api-key': project.endpointsKey,
      },
      body: JSON.stringify({
        pos_id: project.posId,
        mode: 'direct',
        method: 'purchase',
        amount: 10,
        currency: 'UAH',
        description: 'Tea',
        order_id: 'order-2',
        cc_number: TEST_CARDS.success,
        exp_month: 12,
        exp_year: 2030,
        card_cvv: '123',
        server_url: `${merchant}/webhooks`,
      }),
    });
    await fakeServer.fake.idle();
    return fakeServer;
  }

  it('with fixedIds, fails done() on the second run, as mockPaymentApi does', async () => {
    const first = await serverRun();
    first.done();
    await first.close();
    await endRun();
    const second = await serverRun();
    try {
      expect(() => second.done()).toThrow(
        /^\[@payhook\/testing\] fake payment server: webhook #1 \(purchase success, order order-2, .*answered "duplicate"/,
      );
    } finally {
      await second.close();
    }
  });
});
