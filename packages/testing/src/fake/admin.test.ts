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

  const pay = async (orderId: string, extra: Record<string, unknown> = {}) => {
    const response = await fetch(`${fake.url}/api/v1/payment`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': `SVC ${fake.fake.project.apiKey}:${SECRET}`,
        'x-api-key': fake.fake.project.endpointsKey,
      },
      body: JSON.stringify({
        pos_id: fake.fake.project.posId,
        mode: 'direct',
        method: 'purchase',
        amount: 5,
        currency: 'XTS',
        description: 'Admin',
        order_id: orderId,
        cc_number: TEST_CARDS.success,
        exp_month: 12,
        exp_year: 2030,
        card_cvv: '123',
        server_url: merchantUrl,
        ...extra,
      }),
    });
    return (await response.json()) as { status: string; payment_id: string; recurring: { id: string } };
  };
  it('refuses a call without the endpoints key', async () => {
    const response = await admin('/clock', { key: 'wrong' });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      message: 'Invalid pos_id field or credentials',
      args: { code: 'S-404' },
    });
  });

  it('drives a subscription, a refund and a cancellation over HTTP, as a test in another language would', async () => {
    const record = await pay('sub-admin-1', {
      amount: 10,
      description: 'Monthly plan',
      customer_ip: '127.0.0.1',
      init_recurring: { interval_unit: 'month', interval_count: 1 },
    });
    expect(record.status).toBe('success');
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

  const attempts = async (prefix: string) =>
    (
      (await (await admin('/deliveries')).json()) as Array<{
        notification: { order_id: string; status: string };
        duplicate: boolean;
        body: string;
      }>
    )
      .filter((d) => d.notification.order_id.startsWith(prefix))
      .map((d) => [d.notification.order_id, d.notification.status, d.duplicate, d.body]);

  it('chooses outcomes and delivery faults over HTTP: a decline, a declined charge, a duplicate, a drop, a reordering, a delay', async () => {
    const chosen = await admin('/outcomes', {
      method: 'POST',
      body: { orderId: 'adm-decline', outcome: 'decline' },
    });
    expect(await chosen.json()).toEqual({ orderId: 'adm-decline', outcome: 'decline' });
    expect((await pay('adm-decline')).status).toBe('failure');

    const duplicate = await admin('/faults', { method: 'POST', body: { duplicate: 1 } });
    expect(await duplicate.json()).toEqual({ duplicate: 1 });
    await pay('adm-dup');
    await admin('/faults', { method: 'POST', body: { drop: true } });
    await pay('adm-drop');
    await admin('/faults', { method: 'POST', body: {} });
    const dropped = (await (await admin('/dropped')).json()) as Array<{
      url: string;
      notification: { order_id: string };
    }>;
    expect(dropped.map((d) => [d.url, d.notification.order_id])).toEqual([[merchantUrl, 'adm-drop']]);

    expect(await (await admin('/outbox/pause', { method: 'POST' })).json()).toEqual({ held: 0 });
    await pay('adm-r1');
    await pay('adm-r2');
    const resumed = await admin('/outbox/resume', { method: 'POST', body: { reverse: true } });
    expect(await resumed.json()).toEqual({ held: 0 });

    await admin('/faults', { method: 'POST', body: { delayMs: 60_000 } });
    await pay('adm-late');
    await admin('/faults', { method: 'POST', body: {} });
    expect(await attempts('adm-late')).toEqual([]);
    await admin('/clock', { method: 'POST', body: { advanceBy: 60_000 } });

    const sub = await pay('adm-sub', {
      init_recurring: { interval_unit: 'day', interval_count: 1, retry_attempts: 0 },
    });
    const queued = await admin(`/subscriptions/${sub.recurring.id}/outcomes`, {
      method: 'POST',
      body: { outcomes: ['decline'] },
    });
    expect(await queued.json()).toEqual({ outcomes: ['decline'] });
    await admin('/clock', { method: 'POST', body: { advanceBy: { days: 2 } } });

    expect(await attempts('adm-')).toEqual([
      ['adm-decline', 'failure', false, '{"ok":true,"outcome":"handled"}'],
      ['adm-dup', 'success', false, '{"ok":true,"outcome":"handled"}'],
      ['adm-dup', 'success', true, '{"ok":true,"outcome":"duplicate"}'],
      ['adm-r2', 'success', false, '{"ok":true,"outcome":"handled"}'],
      ['adm-r1', 'success', false, '{"ok":true,"outcome":"handled"}'],
      ['adm-late', 'success', false, '{"ok":true,"outcome":"handled"}'],
      ['adm-sub', 'success', false, '{"ok":true,"outcome":"handled"}'],
      ['adm-sub', 'failure', false, '{"ok":true,"outcome":"handled"}'],
      ['adm-sub', 'success', false, '{"ok":true,"outcome":"handled"}'],
    ]);
  });

  it('refuses an unknown outcome or fault with 400, naming the choices', async () => {
    const outcome = await admin('/outcomes', { method: 'POST', body: { orderId: 'x', outcome: 'maybe' } });
    expect([outcome.status, await outcome.json()]).toEqual([
      400,
      {
        message: 'outcome must be one of: success, 3ds, decline, insufficient_funds.',
        args: { code: 'R-400' },
      },
    ]);
    const fault = await admin('/faults', { method: 'POST', body: { flood: 1 } });
    expect([fault.status, await fault.json()]).toEqual([
      400,
      {
        message: 'Unknown fault "flood": duplicate, delayMs, drop, loseFirstAttempt, hold.',
        args: { code: 'R-400' },
      },
    ]);
  });

  it('holds a webhook under the hold fault until resume, and loses a first attempt under loseFirstAttempt', async () => {
    await admin('/faults', { method: 'POST', body: { hold: true } });
    await pay('adm-hold');
    await admin('/faults', { method: 'POST', body: {} });
    expect(await attempts('adm-hold')).toEqual([]);
    expect(await (await admin('/outbox/resume', { method: 'POST' })).json()).toEqual({ held: 0 });
    expect(await attempts('adm-hold')).toEqual([
      ['adm-hold', 'success', false, '{"ok":true,"outcome":"handled"}'],
    ]);

    await admin('/faults', { method: 'POST', body: { loseFirstAttempt: true } });
    await pay('adm-lost');
    await admin('/faults', { method: 'POST', body: {} });
    expect(await attempts('adm-lost')).toEqual([['adm-lost', 'success', false, undefined]]);
    await admin('/clock', { method: 'POST', body: { advanceBy: 60_000 } });
    expect(await attempts('adm-lost')).toEqual([
      ['adm-lost', 'success', false, undefined],
      ['adm-lost', 'success', false, '{"ok":true,"outcome":"handled"}'],
    ]);
  });

  it('answers a clear 400 or 409 for a bad request', async () => {
    const bad = await admin('/clock', { method: 'POST', body: { advanceTo: 'soon' } });
    expect(bad.status).toBe(400);
    const unknown = await admin('/payments/nope/void', { method: 'POST' });
    expect(unknown.status).toBe(404);
  });
});
