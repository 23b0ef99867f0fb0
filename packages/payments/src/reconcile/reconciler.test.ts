import { createWebhookHandler, HandlerError, MemoryStore } from '@payhook/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deferred } from '../../../core/test/deliveries.js';
import { purchase, refund } from '../../../core/test/fixtures.js';
import type { ResendAnswer, ResendClient, ResendRequest } from './api-client.js';
import { ApiError } from './api-errors.js';
import { createReconciler, type PendingOrder, type ReconcilerOptions } from './reconciler.js';

const NOW = Date.parse('2026-11-25T10:00:00Z');
const DAY = 86_400_000;

/** A client answering from `answers` by order id, recording each request. */
function stubClient(answers: Record<string, ResendAnswer | Error>, posId?: string) {
  const requests: ResendRequest[] = [];
  const client: ResendClient = {
    ...(posId === undefined ? {} : { posId }),
    async resend(request) {
      requests.push(request);
      const answer = answers[request.orderId];
      if (answer === undefined) throw new Error(`unexpected ${request.orderId}`);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  return { client, requests };
}

const record = (orderId: string, overrides: Record<string, unknown> = {}): ResendAnswer => ({
  status: 200,
  record: purchase({ order_id: orderId, payment_id: `pay-${orderId}`, ...overrides }),
});

function webhook() {
  const ran: string[] = [];
  const handler = createWebhookHandler({ secret: 's', store: new MemoryStore(), logger: false }).onAny(
    (n) => void ran.push(`${n.order_id}:${n.status}`),
  );
  return { handler, ran };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('createReconciler().run', () => {
  it('reports every order: applied, requested, still pending, failed with why, and given up unrequested', async () => {
    const { client, requests } = stubClient({
      paid: record('paid'),
      sent: { status: 200, record: undefined },
      waiting: record('waiting', { status: 'pending', status_code: '2122' }),
      unpaid: record('unpaid', { status: 'init', status_code: undefined }),
      unknown: new ApiError('api.not_found', 'GET … answered 404: the service knows no such order.', {
        status: 404,
      }),
      down: new ApiError('api.server', 'GET … answered 500', { status: 500 }),
    });
    const { handler, ran } = webhook();
    const orders: PendingOrder[] = [
      { orderId: 'paid', createdAt: new Date(NOW - DAY) },
      { orderId: 'sent', operation: 'refund' },
      { orderId: 'waiting', createdAt: '2026-11-25T09:00:00' },
      { orderId: 'unpaid' },
      { orderId: 'unknown' },
      { orderId: 'down' },
      { orderId: 'old', createdAt: NOW - 8 * DAY },
    ];
    const reconciler = createReconciler({
      webhook: handler,
      api: client,
      listPending: async () => orders,
      now: () => NOW,
      requestsPerSecond: 1000,
    });
    const report = await reconciler.run();
    expect(report.results.map((r) => [r.order.orderId, r.status, r.outcome, r.paymentStatus])).toEqual([
      ['paid', 'applied', 'handled', 'success'],
      ['sent', 'requested', undefined, undefined],
      ['waiting', 'pending', 'handled', 'pending'],
      ['unpaid', 'pending', undefined, 'init'],
      ['unknown', 'failed', undefined, undefined],
      ['down', 'failed', undefined, undefined],
      ['old', 'given_up', undefined, undefined],
    ]);
    expect(report.counts).toEqual({ applied: 1, requested: 1, pending: 2, failed: 2, given_up: 1 });
    expect((report.results[4]!.error as ApiError).code).toBe('api.not_found');
    expect(report.results[4]!.reason).toBe(
      '[@payhook/payments] GET … answered 404: the service knows no such order.',
    );
    expect(report.results[6]!.reason).toBe('created 8 day(s) ago: past giveUpAfterMs.');
    expect(requests.map((r) => r.orderId).sort()).toEqual([
      'down',
      'paid',
      'sent',
      'unknown',
      'unpaid',
      'waiting',
    ]);
    expect(requests.find((r) => r.orderId === 'sent')).toEqual({ orderId: 'sent', operation: 'refund' });
    expect(ran.sort()).toEqual(['paid:success', 'waiting:pending']);
  });

  it('applies a record once: a second run, or the webhook delivered later, is a duplicate', async () => {
    const { client } = stubClient({ paid: record('paid') });
    const { handler, ran } = webhook();
    const reconciler = createReconciler({
      webhook: handler,
      api: client,
      listPending: () => [{ orderId: 'paid' }],
    });
    expect((await reconciler.run()).results[0]).toMatchObject({ status: 'applied', outcome: 'handled' });
    expect((await reconciler.run()).results[0]).toMatchObject({ status: 'applied', outcome: 'duplicate' });
    expect(ran).toEqual(['paid:success']);
  });

  it('reports a failing handler as failed, and a later run applies the record', async () => {
    const { client } = stubClient({ paid: record('paid') });
    let fail = true;
    const handler = createWebhookHandler({ secret: 's', logger: false }).on('purchase', () => {
      if (fail) {
        fail = false;
        throw new Error('the database is down');
      }
    });
    const reconciler = createReconciler({
      webhook: handler,
      api: client,
      listPending: () => [{ orderId: 'paid' }],
    });
    const first = (await reconciler.run()).results[0]!;
    expect(first.status).toBe('failed');
    expect(first.error).toBeInstanceOf(HandlerError);
    expect((first.error as HandlerError).code).toBe('handler.failed');
    expect((await reconciler.run()).results[0]).toMatchObject({ status: 'applied', outcome: 'handled' });
  });

  it('fails an answer that carries another order, or a record that is not a notification, without running a handler', async () => {
    const { client } = stubClient({
      mine: record('someone-else'),
      broken: { status: 200, record: { order_id: 'broken', status: 'success' } },
    });
    const { handler, ran } = webhook();
    const report = await createReconciler({
      webhook: handler,
      api: client,
      listPending: () => [
        { orderId: 'mine' },
        { orderId: 'broken' },
        { orderId: 'x', createdAt: 'yesterday' },
      ],
    }).run();
    expect(
      report.results.map((r) => [r.status, (r.error as { code?: string } | undefined)?.code, r.reason]),
    ).toEqual([
      [
        'failed',
        'api.answer_mismatch',
        '[@payhook/payments] the service answered the record of another order than mine: not applied.',
      ],
      [
        'failed',
        'notification.invalid',
        expect.stringMatching(/^\[@payhook\/core\] notification is missing or has malformed required field/),
      ],
      ['failed', undefined, 'createdAt is not a date.'],
    ]);
    expect(ran).toEqual([]);
  });

  it('refuses, per order, a record of another project, transaction or operation, and applies what the spec allows', async () => {
    const POS = 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e';
    const { client } = stubClient(
      {
        project: record('project', { pos_id: '00000000-0000-4000-8000-000000000000' }),
        charge: record('charge', { transaction_id: 'tx-2' }),
        refunded: record('refunded'),
        held: record('held', { method: 'auth' }),
        latest: record('latest', { transaction_id: 'tx-9' }),
        asked: record('asked', { transaction_id: 'tx-1' }),
        auth: record('auth', { method: 'auth', status_code: '1002' }),
        refund: { status: 200, record: refund({ order_id: 'refund' }) },
        upper: record('upper', { pos_id: POS.toUpperCase() }),
      },
      POS,
    );
    const { handler, ran } = webhook();
    const report = await createReconciler({
      webhook: handler,
      api: client,
      listPending: () => [
        { orderId: 'project' },
        { orderId: 'charge', transactionId: 'tx-1' },
        { orderId: 'refunded', operation: 'refund' },
        { orderId: 'held' },
        { orderId: 'latest' },
        { orderId: 'asked', transactionId: 'tx-1' },
        { orderId: 'auth', operation: 'auth' },
        { orderId: 'refund', operation: 'refund' },
        { orderId: 'upper' },
      ],
    }).run();
    const refused = (text: string) => [
      'failed',
      'api.answer_mismatch',
      `[@payhook/payments] ${text}: not applied.`,
    ];
    expect(report.results.map((r) => [r.status, (r.error as ApiError | undefined)?.code, r.reason])).toEqual([
      refused("the service answered, for order project, a record of another project than the client's posId"),
      refused('the service answered, for order charge, a record of another transaction than tx-1'),
      refused(
        'the service answered, for order refunded, a record of another operation than the refund asked',
      ),
      refused('the service answered, for order held, a record of another operation than the purchase asked'),
      ...Array.from({ length: 5 }, () => ['applied', undefined, undefined]),
    ]);
    expect(ran.sort()).toEqual([
      'asked:success',
      'auth:success',
      'latest:success',
      'refund:success',
      'upper:success',
    ]);
  });

  it('does not apply a record that names no transaction_id when one was asked: the webhook will carry it', async () => {
    const { client } = stubClient({ sub: record('sub', { transaction_id: null }) });
    const { handler, ran } = webhook();
    const report = await createReconciler({
      webhook: handler,
      api: client,
      listPending: () => [{ orderId: 'sub', transactionId: 'tx-1' }],
    }).run();
    expect(report.results.map((r) => [r.status, r.reason])).toEqual([
      [
        'requested',
        'the record answered names no transaction_id: not applied; the re-sent webhook carries it.',
      ],
    ]);
    expect(ran).toEqual([]);
  });

  it('without a webhook only asks the service to re-send: a record is reported requested', async () => {
    const { client } = stubClient({ paid: record('paid') });
    const report = await createReconciler({ api: client, listPending: () => [{ orderId: 'paid' }] }).run();
    expect(report.results[0]).toMatchObject({ status: 'requested', paymentStatus: 'success' });
    expect(report.results[0]!.outcome).toBeUndefined();
  });

  it('keeps at most `concurrency` re-sends under way', async () => {
    let active = 0;
    let most = 0;
    const gates = Array.from({ length: 6 }, () => deferred());
    const client: ResendClient = {
      async resend(request) {
        active++;
        most = Math.max(most, active);
        await gates[Number(request.orderId)]!.promise;
        active--;
        return { status: 200, record: undefined };
      },
    };
    const orders = gates.map((_, i) => ({ orderId: String(i) }));
    const run = createReconciler({
      api: client,
      listPending: () => orders,
      concurrency: 2,
      requestsPerSecond: 1e6,
    }).run();
    for (const [i, gate] of gates.entries()) {
      await vi.waitFor(() => expect(active).toBe(Math.min(2, gates.length - i)));
      gate.resolve();
    }
    expect((await run).counts.requested).toBe(6);
    expect(most).toBe(2);
  });

  it('starts at most `requestsPerSecond` re-sends a second', async () => {
    vi.useFakeTimers({ now: NOW });
    const started: number[] = [];
    const client: ResendClient = {
      async resend() {
        started.push(Date.now() - NOW);
        return { status: 200, record: undefined };
      },
    };
    const orders = Array.from({ length: 5 }, (_, i) => ({ orderId: `o-${i}` }));
    const run = createReconciler({ api: client, listPending: () => orders, requestsPerSecond: 2 }).run();
    await vi.runAllTimersAsync();
    await run;
    expect(started).toEqual([0, 500, 1000, 1500, 2000]);
  });

  it('joins a run asked for while one is under way, and takes async iterables', async () => {
    const gate = deferred();
    let listed = 0;
    const client: ResendClient = {
      async resend() {
        await gate.promise;
        return { status: 200, record: undefined };
      },
    };
    const reconciler = createReconciler({
      api: client,
      listPending: async function* () {
        listed++;
        yield { orderId: 'a' };
      },
    });
    const first = reconciler.run();
    const second = reconciler.run();
    expect(second).toBe(first);
    gate.resolve();
    expect((await first).counts.requested).toBe(1);
    expect(listed).toBe(1);
    await reconciler.run();
    expect(listed).toBe(2);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['giveUpAfterMs', { giveUpAfterMs: 0 }, 'giveUpAfterMs must be a positive number, not 0.'],
    ['concurrency', { concurrency: 0 }, 'concurrency must be a positive number, not 0.'],
    [
      'requestsPerSecond',
      { requestsPerSecond: Number.NaN },
      'requestsPerSecond must be a positive number, not NaN.',
    ],
    ['listPending', { listPending: [] }, 'listPending must be a function, not an empty array.'],
    ['onResult', { onResult: true }, 'onResult must be a function, not true.'],
    ['now', { now: 1 }, 'now must be a function, not 1.'],
    ['webhook', { webhook: {} }, 'webhook must be a webhook handler (with process), not an object.'],
    [
      'api',
      { api: undefined },
      'api must be the API client options or a client from createApiClient, not undefined.',
    ],
    [
      'api.timeoutMs',
      {
        api: {
          baseUrl: 'https://pay.test',
          posId: 'p',
          apiKey: 'k',
          endpointsKey: 'e',
          apiSecret: 's',
          timeoutMs: 2 ** 31,
        },
      },
      'timeoutMs must be a number of milliseconds from 1 to 2147483647, not 2147483648.',
    ],
  ])('refuses a wrong %s when built, with a TypeError naming it', (_name, options, message) => {
    const { client } = stubClient({});
    expect(() =>
      createReconciler({ api: client, listPending: () => [], ...options } as ReconcilerOptions),
    ).toThrow(new TypeError(`[@payhook/payments] ${message}`));
  });

  it('builds with every option at a valid value', () => {
    const { client } = stubClient({});
    const webhook = createWebhookHandler({ secret: 's', logger: false });
    const options: ReconcilerOptions = {
      api: client,
      webhook,
      listPending: async () => [],
      giveUpAfterMs: 1,
      concurrency: 2.5,
      requestsPerSecond: 0.5,
      onResult: () => {},
      now: () => NOW,
    };
    expect(typeof createReconciler(options).run).toBe('function');
  });
});
