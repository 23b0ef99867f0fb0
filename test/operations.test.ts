import { createServer, type IncomingMessage } from 'node:http';
import { createNodeListener, createWebhookHandler, type Notification } from '@payhook/core';
import { type ApiClient, ApiError, createApiClient } from '@payhook/payments';
import { TEST_CARDS } from '@payhook/testing/fake';
import { mockPaymentApi } from '@payhook/testing/nock';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, serveCli } from '../packages/testing/test/run-cli.js';
import { closing, listen } from './support/listen.js';

// The whole loop of issue 43 as a merchant's code runs it, against `payhook serve` (the built CLI, a child process)
// and `mockPaymentApi`: auth 100 → capture 60 → refund 20 → a refund of 50 refused → the order's operations; a void
// of another auth; a purchase refunded in full; each operation's webhook handled once by core's handler.

const SECRET = 'operations-loop-secret';
const CURRENCY = 'XTS';
const CARD = { cc_number: TEST_CARDS.success, exp_month: 12, exp_year: 2031, card_cvv: '737' };

beforeAll(() => {
  assertBuilt();
});

interface Service {
  client: ApiClient;
}

/** `payhook serve` in a child process, its credentials read from its banner. */
async function serve(): Promise<Service> {
  const served = await serveCli(['--seed', '43'], { PAYHOOK_SECRET: SECRET });
  closing.push(async () => {
    await served.stop();
  });
  const { posId, apiKey, endpointsKey } = served.credentials;
  return { client: createApiClient({ baseUrl: served.url, posId, apiKey, endpointsKey, apiSecret: SECRET }) };
}

/** `mockPaymentApi` on an origin of its own. */
async function mock(): Promise<Service> {
  const api = mockPaymentApi({ baseUrl: `https://ops-${process.pid}.pay.test`, secret: SECRET, seed: 43 });
  closing.push(async () => {
    api.done({ expectRefusals: [404, 422] });
    api.restore();
  });
  const { posId, apiKey, endpointsKey } = api.project;
  return {
    client: createApiClient({ baseUrl: api.baseUrl, posId, apiKey, endpointsKey, apiSecret: SECRET }),
  };
}

/** The merchant's receiver: every notification its handler ran for, by identity. */
async function receiver() {
  const handled: string[] = [];
  const webhook = createWebhookHandler<IncomingMessage>({ secret: SECRET, logger: false }).onAny(
    (n: Notification) => {
      const id = n.kind === 'secondary' ? n.operation_id : n.payment_id;
      handled.push(`${n.order_id} ${n.method} ${n.amount} ${id}`);
    },
  );
  const serverUrl = `${await listen(createServer(createNodeListener(webhook)))}/webhooks`;
  return { handled, serverUrl };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(ApiError);
      return error as ApiError;
    },
  );
}

describe.each([
  ['payhook serve', serve],
  ['mockPaymentApi', mock],
] as const)('capture, void, refund and the order status against %s', (_transport, start) => {
  it('runs auth → capture → refund → a refused refund → status, a void, a full refund; each webhook handled once', async () => {
    const { client } = await start();
    const { handled, serverUrl } = await receiver();
    const pay = (order_id: string, method: 'auth' | 'purchase', amount: number) =>
      client.createPayment({
        mode: 'direct',
        method,
        amount,
        currency: CURRENCY,
        description: 'Tea',
        order_id,
        server_url: serverUrl,
        customer_ip: '10.0.0.7',
        ...CARD,
      });

    await pay('auth-100', 'auth', 100);
    const captured = await client.capture({ orderId: 'auth-100', amount: 60, currency: CURRENCY });
    expect(captured).toMatchObject({ method: 'capture', amount: 60, currency: CURRENCY, status: 'success' });
    const refunded = await client.refund({ orderId: 'auth-100', amount: 20, currency: CURRENCY });
    expect(refunded).toMatchObject({ method: 'refund', amount: 20, status: 'success', status_code: '1004' });

    // The client read what is left (40) and sends nothing; given the amount itself, the service refuses.
    const known = await refusal(client.refund({ orderId: 'auth-100', amount: 50, currency: CURRENCY }));
    expect(known.code).toBe('api.amount_exceeded');
    expect(known.message).toContain('more than what is left to refund (40.00)');
    const told = await refusal(
      client.refund({ orderId: 'auth-100', amount: 50, currency: CURRENCY, orderAmount: 100 }),
    );
    expect([told.code, told.status, told.serviceCode]).toEqual(['api.refused', 422, 'O-422']);

    const operations = await client.getOperations('auth-100');
    expect(operations.map((o) => `${o.method} ${o.amount} ${o.status}`)).toEqual([
      'auth 100 success',
      'capture 60 success',
      'refund 20 success',
    ]);

    await pay('auth-30', 'auth', 30);
    const voided = await client.void({ orderId: 'auth-30', currency: CURRENCY });
    expect(voided).toMatchObject({ method: 'void', amount: 30, status: 'success' });
    const noCapture = await refusal(client.capture({ orderId: 'auth-30', amount: 1, currency: CURRENCY }));
    expect(noCapture.code).toBe('api.amount_exceeded');

    await pay('purchase-45', 'purchase', 45);
    const full = await client.refund({ orderId: 'purchase-45', amount: 45, currency: CURRENCY });
    expect(full).toMatchObject({
      method: 'refund',
      amount: 45,
      receipt_url: expect.stringContaining('/public/receipt/'),
    });
    const nothingLeft = await refusal(
      client.refund({ orderId: 'purchase-45', amount: 0.01, currency: CURRENCY }),
    );
    expect(nothingLeft.code).toBe('api.amount_exceeded');

    const ids = [captured, refunded, voided, full].map((o) => o.operation_id);
    await until(() => handled.length >= 7, 'seven webhooks');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(handled.map((h) => h.split(' ').slice(0, 3).join(' ')).sort()).toEqual(
      [
        'auth-100 auth 100',
        'auth-100 capture 60',
        'auth-100 refund 20',
        'auth-30 auth 30',
        'auth-30 void 30',
        'purchase-45 purchase 45',
        'purchase-45 refund 45',
      ].sort(),
    );
    for (const id of ids) expect(handled.filter((h) => h.endsWith(` ${id}`))).toHaveLength(1);
  });

  it('answers api.not_found for an order the service does not know (the credentials check of `orders/0`)', async () => {
    const { client } = await start();
    const error = await refusal(client.getOperations('0'));
    expect([error.code, error.status, error.serviceCode]).toEqual(['api.not_found', 404, 'N-404']);
  });
});
