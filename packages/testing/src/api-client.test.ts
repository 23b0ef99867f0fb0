import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeListener, createWebhookHandler, type Notification } from '@payhook/core';
import { ApiError, createApiClient } from '@payhook/payments';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_CARDS, THREE_DS_CODE } from './fake/outcomes.js';
import { mockPaymentApi, type PaymentApiMock } from './nock.js';

const SECRET = 'client-checkout-secret';
const closing: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** The README's setup: the mock, core's API client pointed at it, and a webhook receiver on 127.0.0.1. */
async function setup() {
  const api: PaymentApiMock = mockPaymentApi({
    baseUrl: 'https://api.payments.test',
    secret: SECRET,
    seed: 5,
  });
  closing.push(() => api.restore());
  const { posId, apiKey, endpointsKey } = api.project;
  const client = createApiClient({ baseUrl: api.baseUrl, posId, apiKey, endpointsKey, apiSecret: SECRET });
  const handled: string[] = [];
  const webhook = createWebhookHandler<IncomingMessage>({ secret: SECRET, logger: false }).onAny(
    (n: Notification) => {
      handled.push(`${n.order_id} ${n.status} ${String(n.status_code)}`);
    },
  );
  const server = createServer(createNodeListener(webhook));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closing.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  const hosted = (orderId: string) =>
    client.createPayment({
      mode: 'hosted',
      method: 'purchase',
      amount: 349.5,
      currency: 'UAH',
      order_id: orderId,
      server_url: serverUrl,
      result_url: 'https://shop.example/thanks',
    });
  return { api, client, serverUrl, hosted, handled };
}

async function checkoutIdOf(created: Awaited<ReturnType<Awaited<ReturnType<typeof setup>>['hosted']>>) {
  if (created.kind !== 'hosted' || created.checkoutId === undefined) throw new Error('expected a checkout');
  return created.checkoutId;
}

describe('a hosted payment created with the API client, driven without a browser', () => {
  it('payByCard with the 3DS test card sends the customer to the 3DS page; the code pays it and the webhook arrives', async () => {
    const { api, hosted, handled } = await setup();
    const checkoutId = await checkoutIdOf(await hosted('order-1'));
    const card = { number: TEST_CARDS.threeDs, expMonth: 12, expYear: 30, cvv: '123', holder: 'Ada' };
    const step = api.fake.payByCard(checkoutId, card);
    expect([step.record.status, step.redirectTo]).toEqual(['pending', api.fake.threeDsUrl(checkoutId)]);
    const paid = api.fake.confirmThreeDs(checkoutId, THREE_DS_CODE);
    expect([paid.record.status, paid.redirectTo]).toEqual(['success', 'https://shop.example/thanks']);
    await api.fake.idle();
    expect(handled).toEqual(['order-1 pending 2122', 'order-1 success 1000']);
    api.done();
  });

  it('completeCheckout decides the outcome in one call: a decline reaches the webhook as failure', async () => {
    const { api, hosted, handled } = await setup();
    const checkoutId = await checkoutIdOf(await hosted('order-2'));
    expect(api.fake.completeCheckout(checkoutId, 'decline').record.status).toBe('failure');
    await api.fake.idle();
    expect(handled).toEqual(['order-2 failure 2000']);
    api.done();
  });
});

describe("the README's refund test", () => {
  it('refunds part of a paid order, refuses more than is left before sending, lists the order; the refund webhook is handled once', async () => {
    const { api, client, serverUrl, handled } = await setup();
    await client.createPayment({
      mode: 'direct',
      method: 'purchase',
      amount: 100,
      currency: 'UAH',
      order_id: 'order-2',
      customer_ip: '203.0.113.7',
      cc_number: TEST_CARDS.success,
      exp_month: 12,
      exp_year: 2030,
      card_cvv: '123',
      server_url: serverUrl,
    });
    const refund = await client.refund({ orderId: 'order-2', amount: 30, currency: 'UAH' });
    expect([refund.method, refund.amount, refund.status_code]).toEqual(['refund', 30, '1004']);
    const calls = api.calls.length;
    const error = await client.refund({ orderId: 'order-2', amount: 80, currency: 'UAH' }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('api.amount_exceeded');
    expect(api.calls.slice(calls).map((c) => `${c.method} ${c.status}`)).toEqual(['GET 200']); // the read only
    const operations = await client.getOperations('order-2');
    expect(operations.map((o) => `${o.method} ${o.amount}`)).toEqual(['purchase 100', 'refund 30']);
    await api.fake.idle();
    expect(handled).toEqual(['order-2 success 1000', 'order-2 success 1000']);
    const refundWebhook = api.fake.deliveries.find((d) => d.notification.method === 'refund')!;
    expect(refundWebhook.notification).toMatchObject({
      operation_id: refund.operation_id,
      amount: 30,
      receipt_url: refund.receipt_url,
    });
    api.done();
  });
});
