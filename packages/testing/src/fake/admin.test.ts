import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeServer, startFakeServer } from '../server.js';
import { TEST_CARDS } from './outcomes.js';

const SECRET = 'admin-routes-secret';

describe('admin routes of the fake server', () => {
  let fake: FakeServer;
  let merchant: Server;
  let merchantUrl: string;
  const handled: string[] = [];

  beforeAll(async () => {
    const webhook = createWebhookHandler<IncomingMessage>({
      secret: SECRET,
      logger: false,
      handle: (n) => void handled.push(`${n.method} ${n.status} ${n.amount}`),
    });
    merchant = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
    merchantUrl = `http://127.0.0.1:${(merchant.address() as AddressInfo).port}/webhooks`;
    fake = await startFakeServer({ secret: SECRET, seed: 7, now: '2026-01-31T10:00:00Z' });
  });

  afterAll(async () => {
    await fake.close();
    await new Promise((resolve) => merchant.close(resolve));
  });

  const admin = (path: string, init: { method?: string; body?: unknown; key?: string } = {}) =>
    fetch(`${fake.url}/__payhook${path}`, {
      method: init.method ?? 'GET',
      headers: {
        'content-type': 'application/json',
        'x-api-key': init.key ?? fake.fake.project.endpointsKey,
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });

  it('refuses a call without the endpoints key', async () => {
    const response = await admin('/clock', { key: 'wrong' });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      message: 'Invalid pos_id field or credentials',
      args: { code: 'S-404' },
    });
  });

  it('drives a subscription, a refund and a cancellation over HTTP, as a test in another language would', async () => {
    const created = await fetch(`${fake.url}/api/v1/payment`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': `SVC-HMAC-SHA256 ${fake.fake.project.apiKey}:not-checked`,
        'x-api-key': fake.fake.project.endpointsKey,
      },
      body: JSON.stringify({
        pos_id: fake.fake.project.posId,
        mode: 'direct',
        method: 'purchase',
        amount: 10,
        currency: 'XTS',
        description: 'Monthly plan',
        order_id: 'sub-admin-1',
        cc_number: TEST_CARDS.success,
        exp_month: 12,
        exp_year: 2030,
        card_cvv: '123',
        customer_ip: '127.0.0.1',
        server_url: merchantUrl,
        init_recurring: { interval_unit: 'month', interval_count: 1 },
      }),
    });
    expect(created.status).toBe(200);
    const record = (await created.json()) as { payment_id: string; recurring: { id: string } };
    expect(await (await admin('/clock')).json()).toEqual({ now: '2026-01-31T10:00:00.000Z' });

    const moved = await admin('/clock', { method: 'POST', body: { advanceBy: { months: 2 } } });
    expect(await moved.json()).toEqual({ now: '2026-03-31T10:00:00.000Z' });

    const refund = await admin(`/payments/${record.payment_id}/refund`, {
      method: 'POST',
      body: { amount: 4 },
    });
    expect(await refund.json()).toMatchObject({ method: 'refund', amount: 4, status: 'success' });

    const canceled = await admin(`/subscriptions/${record.recurring.id}/cancel`, { method: 'POST' });
    expect(await canceled.json()).toEqual({ status: 'canceled' });
    await admin('/clock', { method: 'POST', body: { advanceTo: '2026-12-31T00:00:00Z' } });

    // The first payment, the charges of Feb 28 and Mar 31, the refund; nothing after the cancellation.
    expect(handled).toEqual([
      'purchase success 10',
      'purchase success 10',
      'purchase success 10',
      'refund success 4',
    ]);
    const deliveries = (await (await admin('/deliveries')).json()) as Array<{ ok: boolean; at: string }>;
    expect(deliveries.map((d) => [d.ok, d.at.slice(0, 10)])).toEqual([
      [true, '2026-01-31'],
      [true, '2026-02-28'],
      [true, '2026-03-31'],
      [true, '2026-03-31'],
    ]);
  });

  it('answers a clear 400 or 409 for a bad request', async () => {
    const bad = await admin('/clock', { method: 'POST', body: { advanceTo: 'soon' } });
    expect(bad.status).toBe(400);
    const unknown = await admin('/payments/nope/void', { method: 'POST' });
    expect(unknown.status).toBe(404);
  });
});
