import { createServer, type Server } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { webhookMiddleware } from '@payhook/express';
import { createPaymentLedger, type PaymentLedger } from '@payhook/payments';
import express from 'express';
import nockPackage from 'nock/package.json' with { type: 'json' };
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TEST_CARDS } from './fake/outcomes.js';
import { mockPaymentApi, type PaymentApiMock } from './nock.js';

const BASE_URL = 'https://api.payments.test';
const SECRET = 'merchant-webhook-secret';

/** `POST /api/v1/payment` with the mock's credentials, for the mock's first project. */
function createPayment(mock: PaymentApiMock, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${BASE_URL}/api/v1/payment`, {
    method: 'POST',
    headers: mock.headers(),
    redirect: 'manual',
    body: JSON.stringify({ pos_id: mock.project.posId, ...body }),
  });
}

interface Merchant {
  url: string;
  server: Server;
  orders: Map<string, string>;
  handled: Array<{ order_id: string; status: string; method: string }>;
  ledger: PaymentLedger;
}

/** The merchant's application: creates payments with fetch, receives webhooks with @payhook/express. */
async function startMerchant(api: () => PaymentApiMock): Promise<Merchant> {
  const orders = new Map<string, string>();
  const handled: Merchant['handled'] = [];
  const ledger = createPaymentLedger();
  const app = express();
  app.use(
    '/webhooks',
    webhookMiddleware({
      secret: SECRET,
      logger: false,
      ledger,
    }).on('purchase', (n) => {
      handled.push({ order_id: n.order_id, status: n.status, method: n.method });
      orders.set(n.order_id, n.status);
    }),
  );
  app.post('/orders', express.json(), async (req, res) => {
    const { orderId, card } = req.body as { orderId: string; card: string };
    const mock = api();
    const response = await createPayment(mock, {
      mode: 'direct',
      method: 'purchase',
      amount: 12.5,
      currency: 'XTS',
      description: 'Green tea, 250 g',
      order_id: orderId,
      cc_number: card,
      exp_month: 12,
      exp_year: 2030,
      card_cvv: '737',
      customer_ip: '203.0.113.7',
      server_url: `${merchant.url}/webhooks`,
      result_url: `${merchant.url}/thanks`,
    });
    res
      .status(response.status)
      .type('application/json')
      .send(await response.text());
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const merchant: Merchant = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    orders,
    handled,
    ledger,
  };
  return merchant;
}

async function order(merchant: Merchant, orderId: string, card: string): Promise<Response> {
  return fetch(`${merchant.url}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orderId, card }),
  });
}

describe('mockPaymentApi with a merchant app on Express and @payhook/express', () => {
  let api: PaymentApiMock;
  let merchant: Merchant;

  beforeEach(async () => {
    api = mockPaymentApi({ baseUrl: BASE_URL, secret: SECRET, now: '2026-03-02T10:00:00Z', seed: 42 });
    merchant = await startMerchant(() => api);
  });

  afterEach(async () => {
    api.restore();
    await new Promise((resolve) => merchant.server.close(resolve));
  });

  it('runs 3DS, the pending and success webhooks, a duplicate, a reordering and a re-send', async () => {
    const created = await order(merchant, 'order-1', TEST_CARDS.threeDs);
    expect(created.status).toBe(200);
    const text = await created.text();
    expect(text).not.toContain(TEST_CARDS.threeDs);
    // As a value: the record's random ids may hold the digits 737 by chance.
    expect(text).not.toContain('"737"');
    const record = JSON.parse(text) as Record<string, unknown>;
    const checkoutId = api.fake.paymentByOrder('order-1')!.checkoutId;
    expect(record).toMatchObject({
      order_id: 'order-1',
      pos_id: api.project.posId,
      mode: 'direct',
      method: 'purchase',
      amount: 12.5,
      currency: 'XTS',
      status: 'pending',
      status_code: '2122',
      user_action_required: true,
      user_action_url: `${BASE_URL}/api/v1/checkout/${checkoutId}/3ds`,
      cc_mask: '400000******3220',
      created_at: '2026-03-02T10:00:00',
    });
    expect(record.cc_token).toMatch(/^tok_[0-9a-f]{32}$/);
    expect(record).not.toHaveProperty('cc_number');
    expect(record).not.toHaveProperty('card_cvv');

    await api.fake.idle();
    expect(merchant.handled).toEqual([{ order_id: 'order-1', status: 'pending', method: 'purchase' }]);

    // The customer passes 3DS; the service delivers the success webhook twice.
    api.fake.setDeliveryFaults({ duplicate: 1 });
    const threeDsPage = await fetch(record.user_action_url as string);
    expect(threeDsPage.status).toBe(200);
    expect(await threeDsPage.text()).toContain('Green tea, 250 g');
    const passed = await fetch(record.user_action_url as string, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=pay',
      redirect: 'manual',
    });
    expect(passed.status).toBe(303);
    expect(passed.headers.get('location')).toBe(`${merchant.url}/thanks`);
    await api.fake.idle();
    api.fake.setDeliveryFaults({});
    const successAttempts = api.fake.deliveries.filter((d) => d.notification.status === 'success');
    expect(successAttempts.map((d) => [d.duplicate, d.status, d.body])).toEqual([
      [false, 200, '{"ok":true,"outcome":"handled"}'],
      [true, 200, '{"ok":true,"outcome":"duplicate"}'],
    ]);
    expect(merchant.orders.get('order-1')).toBe('success');

    // A second order whose webhooks arrive in reverse order: success first, then the stale pending.
    api.fake.outbox.pause();
    expect((await order(merchant, 'order-2', TEST_CARDS.threeDs)).status).toBe(200);
    const second = api.fake.paymentByOrder('order-2')!;
    api.fake.completeCheckout(second.checkoutId, 'pay');
    expect(api.fake.outbox.held).toBe(2);
    await api.fake.outbox.resume({ reverse: true });
    const reordered = api.fake.deliveries.filter((d) => d.notification.order_id === 'order-2');
    expect(reordered.map((d) => [d.notification.status, d.body])).toEqual([
      ['success', '{"ok":true,"outcome":"handled"}'],
      ['pending', '{"ok":true,"outcome":"stale"}'],
    ]);
    expect(merchant.orders.get('order-2')).toBe('success');
    const recorded = await merchant.ledger.get('order-2');
    expect(recorded?.state).toBe('paid');
    expect(recorded?.deliveries.map((d) => [d.status, d.verdict])).toEqual([
      ['success', 'moved'],
      ['pending', 'stale'],
    ]);

    // The merchant asks for the first order's webhook again: same record, answered as a duplicate.
    const before = api.fake.deliveries.length;
    const resent = await fetch(
      `${BASE_URL}/api/v1/pos/${api.project.posId}/orders/order-1/purchase?callback=true`,
      { headers: api.headers() },
    );
    expect(resent.status).toBe(200);
    expect(await resent.json()).toMatchObject({
      order_id: 'order-1',
      status: 'success',
      status_code: '1000',
      transaction_id: record.transaction_id,
    });
    await api.fake.idle();
    expect(api.fake.deliveries.slice(before).map((d) => [d.notification.status, d.body])).toEqual([
      ['success', '{"ok":true,"outcome":"duplicate"}'],
    ]);
    expect(merchant.handled.filter((h) => h.order_id === 'order-1')).toEqual([
      { order_id: 'order-1', status: 'pending', method: 'purchase' },
      { order_id: 'order-1', status: 'success', method: 'purchase' },
    ]);
    api.done();
  });

  it('runs a hosted subscription through the API: checkout, a charge a month later, 4.4 re-send over node:https', async () => {
    const response = await createPayment(api, {
      mode: 'hosted',
      method: 'purchase',
      amount: 7,
      currency: 'XTS',
      description: 'Monthly box',
      order_id: 'hosted-sub',
      server_url: `${merchant.url}/webhooks`,
      init_recurring: { interval_unit: 'month', interval_count: 1 },
    });
    expect(response.status).toBe(303);
    const form = await fetch(response.headers.get('location')!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=pay',
    });
    expect(form.status).toBe(200);
    await api.fake.clock.advanceBy({ months: 1 });
    const payment = api.fake.paymentByOrder('hosted-sub')!;
    const recurringId = payment.record.recurring!.id;
    expect(payment.charges.map((c) => [c.record.created_at, c.record.status])).toEqual([
      ['2026-04-02T10:00:00', 'success'],
    ]);
    const transactionId = payment.record.transaction_id!;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      // nock patches the module object: a named ESM import of `request` would bypass it.
      const req = https.request(
        `${BASE_URL}/api/v1/pos/${api.project.posId}/orders/hosted-sub/purchase?callback=true&transactionId=${transactionId}`,
        { headers: api.headers() },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({
      transaction_id: transactionId,
      created_at: '2026-03-02T10:00:00',
      status: 'success',
      recurring: { id: recurringId, status: 'active' },
    });
    await api.fake.idle();
    expect(merchant.handled.filter((h) => h.order_id === 'hosted-sub').map((h) => h.status)).toEqual([
      'success',
      'success',
    ]);
    expect(api.fake.deliveries.at(-1)!.body).toBe('{"ok":true,"outcome":"duplicate"}');
    api.done();
  });
});

/** A local port nothing listens on: a server is started, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('mockPaymentApi: failures are loud', () => {
  let api: PaymentApiMock | undefined;
  afterEach(() => api?.restore());

  it('runs on the nock major this run installed (14 by default, 15 under scripts/nock15.sh)', () => {
    expect(Number(nockPackage.version.split('.')[0])).toBe(Number(process.env.EXPECT_NOCK_MAJOR ?? 14));
  });

  it('done() fails with each webhook server_url never acknowledged and its cause, unless failures are expected', async () => {
    const port = await closedPort();
    api = mockPaymentApi({
      baseUrl: BASE_URL,
      secret: SECRET,
      now: '2026-03-02T10:00:00Z',
      seed: 5,
      retrySchedule: [],
    });
    const response = await createPayment(api, {
      mode: 'direct',
      method: 'purchase',
      amount: 3,
      currency: 'XTS',
      description: 'Tea',
      order_id: 'order-down',
      cc_number: TEST_CARDS.success,
      exp_month: 12,
      exp_year: 2030,
      card_cvv: '737',
      server_url: `http://127.0.0.1:${port}/webhooks`,
    });
    expect(response.status).toBe(200);
    await api.fake.idle();
    const expected = `[@payhook/testing] fake payment API: webhook #1 (purchase success, order order-down) to http://127.0.0.1:${port}/webhooks was not delivered after 1 attempt(s): fetch failed (connect ECONNREFUSED 127.0.0.1:${port}).`;
    expect(() => api!.done()).toThrow(expected);
    expect(api.isDone()).toBe(false);
    expect(() => api!.done({ expectFailedDeliveries: true })).not.toThrow();
    api.restore();

    api = mockPaymentApi({ baseUrl: BASE_URL, fake: api.fake, expectFailedDeliveries: true });
    await fetch(`${BASE_URL}/api/v1/pos/${api.project.posId}/orders/order-down/purchase?callback=true`, {
      headers: api.headers(),
    });
    await api.fake.idle();
    expect(api.fake.deliveries.map((d) => d.error)).toEqual([
      `fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`,
      `fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`,
    ]);
    expect(() => api!.done()).not.toThrow();
  });

  it('done() names a webhook the receiver answered with an error status', async () => {
    const receiver = express().post('/webhooks', (_req, res) => {
      res.status(500).send('boom');
    });
    const server = await new Promise<Server>((resolve) => {
      const s = receiver.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    try {
      api = mockPaymentApi({ baseUrl: BASE_URL, secret: SECRET, seed: 6, retrySchedule: [60_000] });
      await createPayment(api, {
        mode: 'hosted',
        method: 'purchase',
        amount: 3,
        currency: 'XTS',
        description: 'Tea',
        order_id: 'order-500',
        server_url: url,
      });
      api.fake.completeCheckout(api.fake.paymentByOrder('order-500')!.checkoutId, 'pay');
      await api.fake.idle();
      await api.fake.clock.advanceBy(60_000);
      expect(() => api!.done()).toThrow(
        `webhook #1 (purchase success, order order-500) to ${url} was not delivered after 2 attempt(s): answered 500 with "boom".`,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('mockPaymentApi: the receiver answer and a padded secret', () => {
  let mocked: PaymentApiMock | undefined;
  afterEach(() => {
    mocked?.restore();
    mocked = undefined;
    vi.restoreAllMocks();
  });

  it("done() quotes the receiver's answer, cut at 200 characters", async () => {
    const long = `{"error":"signature.invalid","message":"${'x'.repeat(300)}"}`;
    const receiver = express().post('/webhooks', (_req, res) => {
      res.status(401).type('application/json').send(long);
    });
    const server = await new Promise<Server>((resolve) => {
      const s = receiver.listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    try {
      mocked = mockPaymentApi({ baseUrl: BASE_URL, secret: SECRET, seed: 7, retrySchedule: [] });
      await createPayment(mocked, {
        mode: 'hosted',
        method: 'purchase',
        amount: 3,
        currency: 'XTS',
        description: 'Tea',
        order_id: 'order-401',
        server_url: url,
      });
      mocked.fake.completeCheckout(mocked.fake.paymentByOrder('order-401')!.checkoutId, 'pay');
      await mocked.fake.idle();
      expect(() => mocked!.done()).toThrow(
        `was not delivered after 1 attempt(s): answered 401 with ${JSON.stringify(`${long.slice(0, 200)}…`)}.`,
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('warns once when the secret has leading or trailing whitespace, as core does', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    mocked = mockPaymentApi({ baseUrl: BASE_URL, secret: 's\n', seed: 8 });
    expect(warn.mock.calls).toEqual([
      [
        "[@payhook/testing] mockPaymentApi: a project's secret has leading or trailing whitespace; it is used as given, so webhooks are signed with it and api.headers() cannot send it (a header value holds no newline). Trim it if it was copied with a newline.",
      ],
    ]);
    mocked.restore();
    mocked = mockPaymentApi({ baseUrl: BASE_URL, secret: SECRET, seed: 8 });
    expect(warn).toHaveBeenCalledTimes(1);
  });
});

describe('mockPaymentApi done() and refusals the test did not expect', () => {
  let api: PaymentApiMock;

  afterEach(() => api.restore());

  /** A hosted payment: once with the right credentials (303), once with a wrong secret (401). */
  async function payOnceRefusedOnce(): Promise<void> {
    api = mockPaymentApi({ baseUrl: BASE_URL, secret: SECRET, seed: 8 });
    const body = { mode: 'hosted', method: 'purchase', amount: 3, currency: 'XTS', description: 'Tea' };
    expect((await createPayment(api, { ...body, order_id: 'ok-1' })).status).toBe(303);
    const refused = await fetch(`${BASE_URL}/api/v1/payment`, {
      method: 'POST',
      headers: { ...api.headers(), 'x-api-auth': `SVC ${api.project.apiKey}:wrong-secret` },
      body: JSON.stringify({ ...body, pos_id: api.project.posId, order_id: 'refused-1' }),
    });
    expect(refused.status).toBe(401);
  }

  it('throws on an undeclared 401, listing method, path, status and code, never a key or secret', async () => {
    await payOnceRefusedOnce();
    expect(api.isDone()).toBe(false);
    let message = '';
    try {
      api.done();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe('[@payhook/testing] fake payment API: POST /api/v1/payment answered 401 S-404.');
    expect(api.calls).toEqual([
      { method: 'POST', path: '/api/v1/payment', status: 303 },
      { method: 'POST', path: '/api/v1/payment', status: 401, code: 'S-404' },
    ]);
  });

  it('passes when the test declares the refusal: expectRefusals true or a list of statuses, on done() or the mock', async () => {
    await payOnceRefusedOnce();
    expect(() => api.done({ expectRefusals: true })).not.toThrow();
    expect(() => api.done({ expectRefusals: [401] })).not.toThrow();
    expect(() => api.done({ expectRefusals: [400, 409] })).toThrow('POST /api/v1/payment answered 401 S-404');
    api.restore();
    api = mockPaymentApi({ baseUrl: BASE_URL, fake: api.fake, expectRefusals: [401] });
    await fetch(`${BASE_URL}/api/v1/payment`, {
      method: 'POST',
      headers: { 'x-api-key': 'wrong' },
      body: '{}',
    });
    expect(api.calls.map((c) => c.status)).toEqual([401]);
    expect(api.isDone()).toBe(true);
  });
});
