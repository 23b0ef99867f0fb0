import { createServer, type IncomingMessage } from 'node:http';
import { createNodeListener, createWebhookHandler, type Notification, sign } from '@payhook/core';
import { encodeBase64Url } from '@payhook/core/adapter';
import {
  ApiError,
  createApiClient,
  createReconciler,
  type PendingOrder,
  type ReconcileReport,
  type ResendClient,
} from '@payhook/payments';
import { type FakeService, TEST_CARDS } from '@payhook/testing/fake';
import { mockPaymentApi } from '@payhook/testing/nock';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../packages/core/src/stores/memory.ts';
import { storeCases } from '../packages/core/test/store-cases.ts';
import { CUSTOMER } from '../packages/payments/test/payment-requests.ts';
import { apiOf, type FakeApi, startFakeApi } from './support/fake-api.js';
import { closing, listen } from './support/listen.js';

const SECRET = 'reconcile-secret';
const NOW = '2026-11-25T09:00:00Z';
const HANDLED = '{"ok":true,"outcome":"handled"}';
const DUPLICATE = '{"ok":true,"outcome":"duplicate"}';

const servers = await storeCases('reconcile');
const stores = servers.cases.filter((c) => c.name === 'PostgresStore' || c.name === 'RedisStore');

// A seed per service: the stores outlive a test, and the same ids would be duplicates of the last test's.
let nextSeed = 27;

const start = (transport: 'nock' | 'server') => () =>
  startFakeApi(transport, {
    baseUrl: `https://pay-${process.pid}.reconcile.test`,
    secret: SECRET,
    now: NOW,
    seed: nextSeed++,
  });
const TRANSPORTS = { nock: start('nock'), server: start('server') };

/** The merchant: a webhook endpoint on 127.0.0.1 counting how often the handlers ran per order and transaction. */
async function merchant(store: ReturnType<(typeof stores)[number]['make']>) {
  const runs = new Map<string, number>();
  const webhook = createWebhookHandler<IncomingMessage>({ secret: SECRET, store, logger: false }).onAny(
    (n: Notification) => {
      const key = runKey(n.order_id, n.transaction_id);
      runs.set(key, (runs.get(key) ?? 0) + 1);
    },
  );
  const url = await listen(createServer(createNodeListener(webhook)));
  return { webhook, runs, serverUrl: `${url}/webhooks` };
}

const runKey = (orderId: string, transactionId: unknown) => `${orderId}/${String(transactionId)}`;

const CARD = { cc_number: TEST_CARDS.success, exp_month: 12, exp_year: 2031, card_cvv: '123' };

/**
 * 20 payments whose webhooks are all dropped: 9 direct purchases, 5 hosted ones paid on the checkout page, 2 split
 * purchases, a subscription and 3 of its daily charges. Answers the orders a merchant's database lists as waiting.
 */
async function droppedPayments(fake: FakeService, serverUrl: string): Promise<PendingOrder[]> {
  fake.setDeliveryFaults({ drop: true });
  const base = {
    pos_id: fake.project.posId,
    method: 'purchase',
    amount: 12.5,
    currency: 'XTS',
    description: 'Order',
    server_url: serverUrl,
    order_3ds_bypass: 'supported',
  };
  const orders: PendingOrder[] = [];
  for (let i = 0; i < 9; i++) {
    fake.createPayment({ ...base, mode: 'direct', order_id: `direct-${i}`, ...CARD });
    orders.push({ orderId: `direct-${i}` });
  }
  for (let i = 0; i < 5; i++) {
    const created = fake.createPayment({ ...base, mode: 'hosted', order_id: `hosted-${i}` });
    if (created.mode !== 'hosted') throw new Error('expected a hosted payment');
    fake.completeCheckout(fake.payment(created.paymentId)!.checkoutId!, 'pay');
    orders.push({ orderId: `hosted-${i}`, operation: 'purchase' });
  }
  for (let i = 0; i < 2; i++) {
    const split = [
      { amount: 5, sub_merchant_id: '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c' },
      { amount: 7.5, sub_merchant_id: '1c7d8b5f-4a8e-4b9f-a2d3-0e1f2a3b4c5d' },
    ];
    fake.createPayment(
      { ...base, mode: 'direct', order_id: `split-${i}`, ...CARD, ...CUSTOMER, split },
      { split: true },
    );
    orders.push({ orderId: `split-${i}` });
  }
  const subscription = fake.createPayment({
    ...base,
    mode: 'direct',
    order_id: 'subscription-1',
    ...CARD,
    init_recurring: { interval_unit: 'day', interval_count: 1, time: '10:00:00' },
  });
  if (subscription.mode !== 'direct') throw new Error('expected a direct payment');
  await fake.clock.advanceBy(3 * 86_400_000 + 7_200_000); // to 11:00 on the 28th: charges on the 26th, 27th, 28th
  const view = fake.paymentByOrder('subscription-1')!;
  for (const record of [subscription.record, ...view.charges.map((c) => c.record)]) {
    orders.push({ orderId: 'subscription-1', transactionId: String(record.transaction_id) });
  }
  await fake.idle();
  expect(fake.outbox.dropped).toHaveLength(20);
  expect(fake.deliveries).toEqual([]);
  fake.setDeliveryFaults({});
  return orders;
}

/** POSTs a dropped original, signed as the service signed it, to the merchant. */
async function deliverLate(dropped: { url: string; notification: Readonly<Record<string, unknown>> }) {
  const data = encodeBase64Url(JSON.stringify(dropped.notification));
  const response = await fetch(dropped.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ data, signature: sign(data, SECRET) }).toString(),
  });
  return `${response.status} ${await response.text()}`;
}

function statuses(report: ReconcileReport): Record<string, string> {
  return Object.fromEntries(
    report.results.map((r) => [runKey(r.order.orderId, r.order.transactionId), r.status]),
  );
}

describe.each(Object.keys(TRANSPORTS) as Array<keyof typeof TRANSPORTS>)(
  'reconcile against the fake service (%s)',
  (transport) => {
    describe.each(stores)('with a $name', (storeCase) => {
      it.skipIf(!storeCase.up)(
        'recovers 20 dropped payments: every handler runs once, late originals answer duplicate, an unknown order fails with 404 and an old one is given up',
        async () => {
          const service = await TRANSPORTS[transport]();
          closing.push(service.close);
          const { fake } = service;
          const shop = await merchant(storeCase.make());
          const waiting = await droppedPayments(fake, shop.serverUrl);
          const now = fake.clock.now().getTime();
          const reconciler = createReconciler({
            webhook: shop.webhook,
            api: apiOf(service, SECRET),
            listPending: () => [
              ...waiting,
              { orderId: 'never-created' },
              { orderId: 'ancient', createdAt: now - 30 * 86_400_000 },
            ],
            now: () => now,
            requestsPerSecond: 1000,
          });

          const report = await reconciler.run();
          await fake.idle();

          expect(report.counts).toEqual({ applied: 20, requested: 0, pending: 0, failed: 1, given_up: 1 });
          const unknown = report.results.find((r) => r.order.orderId === 'never-created')!;
          const notFound = unknown.error as ApiError;
          expect(notFound).toBeInstanceOf(ApiError);
          expect([notFound.code, notFound.status, notFound.serviceCode]).toEqual([
            'api.not_found',
            404,
            'N-404',
          ]);
          expect(report.results.find((r) => r.order.orderId === 'ancient')!.status).toBe('given_up');
          expect(service.paths.some((p) => p.includes('/orders/ancient/'))).toBe(false);
          expect(service.paths.filter((p) => p.includes('/orders/never-created/'))).toHaveLength(1);

          // Every order's handlers ran exactly once, whether the record or the re-sent webhook came first.
          const expected = Object.fromEntries(
            report.results
              .filter((r) => r.status === 'applied')
              .map((r) => [runKey(r.order.orderId, lookupTx(fake, r.order)), 1]),
          );
          expect(Object.fromEntries(shop.runs)).toEqual(expected);
          expect(shop.runs.size).toBe(20);
          // The service re-sent each webhook too: each was acknowledged, and exactly one of the record and the
          // webhook was handled per order.
          expect(fake.deliveries).toHaveLength(20);
          expect(fake.deliveries.every((d) => d.status === 200)).toBe(true);
          const handled = new Map<string, number>();
          const count = (key: string) => handled.set(key, (handled.get(key) ?? 0) + 1);
          for (const d of fake.deliveries) {
            expect([HANDLED, DUPLICATE]).toContain(d.body);
            if (d.body === HANDLED)
              count(runKey(String(d.notification.order_id), d.notification.transaction_id));
          }
          for (const r of report.results) {
            if (r.outcome === 'handled') count(runKey(r.order.orderId, lookupTx(fake, r.order)));
          }
          expect([...handled.values()]).toEqual(Array(20).fill(1));

          // The dropped originals arrive at last: duplicates, nothing runs again.
          for (const dropped of fake.outbox.dropped)
            expect(await deliverLate(dropped)).toBe(`200 ${DUPLICATE}`);
          expect([...shop.runs.values()]).toEqual(Array(20).fill(1));

          // A second run finds nothing new to do.
          const again = await reconciler.run();
          expect(again.results.filter((r) => r.status === 'applied').map((r) => r.outcome)).toEqual(
            Array(20).fill('duplicate'),
          );
          expect(statuses(again)['never-created/undefined']).toBe('failed');
        },
      );
    });
  },
);

/**
 * The service failing some orders: 500 for `boom-*`, no answer at all for `slow-*`; the rest reach the fake.
 * With nock, interceptors registered before the fake's win; with a server, a proxy in front of it.
 */
const FAILING = {
  nock: async (): Promise<FakeApi> => {
    const baseUrl = `https://pay-${process.pid}-faults.reconcile.test`;
    const failing = nock(baseUrl).persist();
    failing
      .get(/\/orders\/boom-/)
      .query(true)
      .reply(500, { message: 'Internal error', args: { code: 'E-500' } });
    failing
      .get(/\/orders\/slow-/)
      .query(true)
      .delay(60_000)
      .reply(200, {});
    const service = await TRANSPORTS.nock();
    const api = mockPaymentApi({ baseUrl, fake: service.fake });
    await service.close();
    return {
      ...service,
      baseUrl,
      close: async () => {
        api.restore();
        nock.cleanAll();
      },
    };
  },
  server: async (): Promise<FakeApi> => {
    const service = await TRANSPORTS.server();
    const proxy = createServer(async (request, response) => {
      if (request.url?.includes('/orders/boom-')) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end('{"message":"Internal error","args":{"code":"E-500"}}');
        return;
      }
      if (request.url?.includes('/orders/slow-')) return; // never answers
      const answer = await fetch(`${service.baseUrl}${request.url}`, {
        headers: request.headers as HeadersInit,
      });
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(await answer.text());
    });
    return { ...service, baseUrl: await listen(proxy) };
  },
};

describe.each(Object.keys(FAILING) as Array<keyof typeof FAILING>)(
  'a service failing some orders (%s)',
  (transport) => {
    it('reports the orders answered 500 or not at all, and applies the rest', async () => {
      const service = await FAILING[transport]();
      closing.push(service.close);
      const { fake } = service;
      const shop = await merchant(new MemoryStore());
      const waiting = await droppedPayments(fake, shop.serverUrl);
      // A tiny timeout only for the order the service never answers: the others keep the default 10 s, so a
      // loaded machine cannot turn them into timeouts.
      const patient = createApiClient(apiOf(service, SECRET));
      const hasty = createApiClient({ ...apiOf(service, SECRET), timeoutMs: 100 });
      const api: ResendClient = {
        resend: (request) => (request.orderId.startsWith('slow-') ? hasty : patient).resend(request),
      };
      const report = await createReconciler({
        webhook: shop.webhook,
        api,
        listPending: () => [
          { orderId: 'boom-1' },
          ...waiting.slice(0, 5),
          { orderId: 'slow-1' },
          ...waiting.slice(5, 10),
          { orderId: 'boom-2' },
        ],
        requestsPerSecond: 1000,
      }).run();
      await fake.idle();

      expect(report.counts).toEqual({ applied: 10, requested: 0, pending: 0, failed: 3, given_up: 0 });
      const failed = report.results.filter((r) => r.status === 'failed');
      expect(
        failed.map((r) => [r.order.orderId, (r.error as ApiError).code, (r.error as ApiError).status]),
      ).toEqual([
        ['boom-1', 'api.server', 500],
        ['slow-1', 'api.timeout', undefined],
        ['boom-2', 'api.server', 500],
      ]);
      expect(failed[0]!.reason).toContain(
        'answered 500 (E-500: Internal error): the service failed; ask again later.',
      );
      expect(failed[1]!.reason).toContain('no answer within 100 ms.');
      expect([...shop.runs.values()]).toEqual(Array(10).fill(1));
    });
  },
);

/** The transaction a result stands for: its own, or the order's only payment's. */
function lookupTx(fake: FakeService, order: PendingOrder): string {
  return order.transactionId ?? String(fake.paymentByOrder(order.orderId)!.record.transaction_id);
}
