import { createServer, type IncomingMessage } from 'node:http';
import { createNodeListener, createWebhookHandler, type Notification } from '@payhook/core';
import { type CreatedPayment, createApiClient } from '@payhook/payments';
import { type FakeServiceOptions, TEST_CARDS, THREE_DS_CODE } from '@payhook/testing/fake';
import { describe, expect, it } from 'vitest';
import { rejected } from '../packages/payments/test/api-rejection.ts';
import { CUSTOMER } from '../packages/payments/test/payment-requests.ts';
import { apiOf, type FakeApi, startFakeApi } from './support/fake-api.js';
import { closing, listen } from './support/listen.js';

const SECRET = 'create-payment-secret';
const NOW = '2026-11-26T09:00:00Z';
const CVV = '737';

let nextSeed = 61;

/** Each transport of the fake, closed after the test. */
const start =
  (transport: 'nock' | 'server') =>
  async (options: Partial<FakeServiceOptions> = {}) => {
    const service = await startFakeApi(transport, {
      baseUrl: `https://pay-${process.pid}.create.test`,
      secret: SECRET,
      now: NOW,
      seed: nextSeed++,
      ...options,
    });
    closing.push(service.close);
    return service;
  };
const TRANSPORTS = { mockPaymentApi: start('nock'), startFakeServer: start('server') };

/** The merchant's webhook receiver (core's createWebhookHandler) on 127.0.0.1: the notifications handled, in order. */
async function receiver() {
  const handled: Array<{ order_id: string; status: string; method: string }> = [];
  const webhook = createWebhookHandler<IncomingMessage>({ secret: SECRET, logger: false }).onAny(
    (n: Notification) => {
      handled.push({ order_id: n.order_id, status: n.status, method: n.method });
    },
  );
  const serverUrl = `${await listen(createServer(createNodeListener(webhook)))}/webhooks`;
  return { handled, serverUrl };
}

function clientOf(service: FakeApi, more: { apiKey?: string; strict?: boolean } = {}) {
  return createApiClient({ ...apiOf(service, SECRET), ...more });
}

const CARD = { cc_number: TEST_CARDS.success, exp_month: 12, exp_year: 2031, card_cvv: CVV };
const PURCHASE = {
  method: 'purchase',
  amount: 12.5,
  currency: 'XTS',
  description: 'Green tea, 250 g',
  order_3ds_bypass: 'supported',
} as const;
const SPLIT = [
  { amount: 5, sub_merchant_id: '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c' },
  { amount: 7.5, sub_merchant_id: '1c7d8b5f-4a8e-4b9f-a2d3-0e1f2a3b4c5d' },
];

function direct(created: CreatedPayment) {
  if (created.kind !== 'direct') throw new Error(`expected a direct payment, got ${created.kind}`);
  return created.record;
}

describe.each(Object.keys(TRANSPORTS) as Array<keyof typeof TRANSPORTS>)(
  'createPayment against the fake service (%s)',
  (transport) => {
    const start = TRANSPORTS[transport];

    it('creates a hosted payment: the checkout URL and id from the 303, paid on the checkout, its webhook handled', async () => {
      const service = await start();
      const { handled, serverUrl } = await receiver();
      const created = await clientOf(service).createPayment({
        ...PURCHASE,
        mode: 'hosted',
        order_id: 'hosted-1',
        server_url: serverUrl,
      });
      if (created.kind !== 'hosted') throw new Error('expected a hosted payment');
      const checkoutId = service.fake.paymentByOrder('hosted-1')?.checkoutId;
      expect(created).toEqual({
        kind: 'hosted',
        checkoutUrl: service.fake.checkoutUrl(checkoutId!),
        checkoutId,
      });
      service.fake.completeCheckout(created.checkoutId!, 'pay');
      await service.fake.idle();
      expect(handled).toEqual([{ order_id: 'hosted-1', status: 'success', method: 'purchase' }]);
    });

    it('creates a direct 3DS payment: the pending record with user_action_url, then the 3DS step and its webhooks', async () => {
      const service = await start();
      const { handled, serverUrl } = await receiver();
      const created = await clientOf(service).createPayment({
        ...PURCHASE,
        ...CARD,
        cc_number: TEST_CARDS.threeDs,
        mode: 'direct',
        order_id: 'direct-3ds',
        customer_ip: '203.0.113.7',
        server_url: serverUrl,
      });
      const record = direct(created);
      const checkoutId = service.fake.paymentByOrder('direct-3ds')!.checkoutId!;
      expect([record.status, record.status_code, record.user_action_required]).toEqual([
        'pending',
        '2122',
        true,
      ]);
      expect(record.user_action_url).toBe(service.fake.threeDsUrl(checkoutId));
      service.fake.confirmThreeDs(checkoutId, THREE_DS_CODE);
      await service.fake.idle();
      expect(handled).toEqual([
        { order_id: 'direct-3ds', status: 'pending', method: 'purchase' },
        { order_id: 'direct-3ds', status: 'success', method: 'purchase' },
      ]);
    });

    it('creates a split payment through /split/purchase, its webhook handled', async () => {
      const service = await start();
      const { handled, serverUrl } = await receiver();
      const record = direct(
        await clientOf(service).createSplitPayment({
          ...PURCHASE,
          ...CARD,
          ...CUSTOMER,
          method: 'purchase',
          mode: 'direct',
          order_id: 'split-1',
          split: SPLIT,
          server_url: serverUrl,
        }),
      );
      expect([record.status, record.split]).toEqual(['success', SPLIT]);
      expect(service.paths).toEqual(['/api/v1/split/purchase']);
      await service.fake.idle();
      expect(handled).toEqual([{ order_id: 'split-1', status: 'success', method: 'purchase' }]);
    });

    it('creates a subscription with init_recurring: recurring init in the record, its webhook handled', async () => {
      const service = await start();
      const { handled, serverUrl } = await receiver();
      const record = direct(
        await clientOf(service).createPayment({
          ...PURCHASE,
          ...CARD,
          mode: 'direct',
          order_id: 'subscription-1',
          customer_ip: '203.0.113.7',
          server_url: serverUrl,
          init_recurring: { interval_unit: 'month', interval_count: 1 },
        }),
      );
      const recurring = (record as { recurring?: { status: string; id: string } }).recurring;
      expect(recurring?.status).toBe('init');
      expect(service.fake.subscription(recurring!.id)?.status).toBe('active');
      await service.fake.idle();
      expect(handled).toEqual([{ order_id: 'subscription-1', status: 'success', method: 'purchase' }]);
    });

    it('refuses an amount with 3 decimals and a card failing Luhn in one error, before any request reaches the fake', async () => {
      const service = await start();
      const error = await rejected(
        clientOf(service).createPayment({
          ...PURCHASE,
          ...CARD,
          amount: 12.345,
          cc_number: '4242424242424241',
          mode: 'direct',
          order_id: 'invalid-1',
        }),
      );
      expect([error.code, error.status, error.violations]).toEqual([
        'api.request_invalid',
        undefined,
        [
          { field: 'amount', code: 'amount.invalid' },
          { field: 'cc_number', code: 'card.luhn' },
        ],
      ]);
      expect(error.message).toContain('amount (amount.invalid');
      expect(error.message).toContain('cc_number (card.luhn');
      expect(service.paths).toEqual([]);
      expect(service.fake.paymentByOrder('invalid-1')).toBeUndefined();
    });

    it('sends a request the default fake accepts without a description or currency', async () => {
      const service = await start();
      const created = await clientOf(service).createPayment({
        method: 'purchase',
        mode: 'hosted',
        amount: 10,
        order_id: 'no-description',
      });
      expect(created.kind).toBe('hosted');
      expect(service.paths).toEqual(['/api/v1/payment']);
    });

    it('refuses a missing description before sending under strict, and maps the strict fake V-400 to api.request_invalid', async () => {
      const service = await start({ strict: true });
      const request = { method: 'purchase', mode: 'hosted', amount: 10, currency: 'XTS', order_id: 'o-1' };
      const local = await rejected(clientOf(service, { strict: true }).createPayment(request));
      expect([local.code, local.violations]).toEqual([
        'api.request_invalid',
        [{ field: 'description', code: 'required' }],
      ]);
      expect(service.paths).toEqual([]);
      const remote = await rejected(clientOf(service).createPayment(request));
      expect([remote.code, remote.status, remote.serviceCode, remote.violations]).toEqual([
        'api.request_invalid',
        400,
        'V-400',
        [{ field: 'description', code: 'required' }],
      ]);
    });

    it('maps a repeated order (P-409) to api.order_exists and bad credentials (S-404) to api.unauthorized; no error carries a key, secret, signature or card field', async () => {
      const service = await start();
      const client = clientOf(service);
      const request = { ...PURCHASE, ...CARD, mode: 'direct', order_id: 'twice', customer_ip: '203.0.113.7' };
      await client.createPayment(request);
      const errors = [
        await rejected(client.createPayment(request)),
        await rejected(clientOf(service, { apiKey: 'wrong-api-key' }).createPayment(request)),
        await rejected(client.createPayment({ ...request, order_id: 'bad', cc_number: '4242424242424241' })),
      ];
      expect(errors.map((e) => [e.code, e.status, e.serviceCode])).toEqual([
        ['api.order_exists', 409, 'P-409'],
        ['api.unauthorized', 401, 'S-404'],
        ['api.request_invalid', undefined, undefined],
      ]);
      const { apiKey, endpointsKey } = service.fake.project;
      const text = JSON.stringify(
        errors.map((e) => [e.message, e.serviceMessage, e.violations, String(e.cause ?? '')]),
      );
      const forbidden = [apiKey, endpointsKey, SECRET, TEST_CARDS.success, '4242424242424241', CVV];
      for (const value of [...forbidden, ...service.signatures]) expect(text).not.toContain(value);
      expect(service.signatures.length).toBe(2);
    });
  },
);

describe('card data over plain HTTP', () => {
  it('is refused to a host that is not loopback, before anything is sent', async () => {
    const service = await TRANSPORTS.mockPaymentApi({ baseUrl: 'http://pay.create.test' });
    const client = createApiClient({
      baseUrl: 'http://pay.create.test',
      posId: service.fake.project.posId,
      apiKey: service.fake.project.apiKey,
      endpointsKey: service.fake.project.endpointsKey,
      apiSecret: SECRET,
    });
    const error = await rejected(
      client.createPayment({ ...PURCHASE, ...CARD, mode: 'direct', order_id: 'plain-1' }),
    );
    expect([error.code, error.status]).toEqual(['api.insecure_transport', undefined]);
    expect(error.message).toContain('card data (cc_number, card_cvv, exp_month, exp_year)');
    expect(error.message).not.toContain(TEST_CARDS.success);
    expect(service.paths).toEqual([]);
  });
});
