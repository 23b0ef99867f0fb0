import diagnostics_channel from 'node:diagnostics_channel';
import type { Notification } from '@payhook/core';
import { StoreError, WebhookError } from '@payhook/core';
import { PAYHOOK_CHANNELS, type WatchMessage } from '@payhook/core/diagnostics';
import { describe, expect, it } from 'vitest';
import type { ResendClient } from '../reconcile/api-client.js';
import { ApiError } from '../reconcile/api-errors.js';
import { MemoryWatchStore } from './memory.js';
import type { OverduePayment, WatchOutage } from './overdue.js';
import { createPaymentWatch, type PaymentWatchOptions } from './watch.js';

const T = Date.parse('2026-11-25T09:00:00Z');
const MINUTE = 60_000;

const NETWORK = () => new ApiError('api.network', 'GET /api/v1/pos-1/orders/o/purchase failed: ECONNREFUSED');
const ERRORS: Record<string, () => Error> = {
  'api.network': NETWORK,
  'api.timeout': () => new ApiError('api.timeout', 'GET … : no answer within 10000 ms.'),
  'api.server (503)': () => new ApiError('api.server', 'GET … answered 503', { status: 503 }),
  'a 429': () => new ApiError('api.refused', 'GET … answered 429.', { status: 429 }),
};

/** A service down while `down()` says so (each call failing with `error()`), then answering `status` records. */
function service(error: () => Error = NETWORK, status?: string) {
  let down = true;
  const asked: string[] = [];
  const api: ResendClient = {
    async resend({ orderId, operation }) {
      asked.push(orderId);
      if (down) throw error();
      if (status === undefined) return { status: 200, record: undefined };
      const record = { order_id: orderId, pos_id: 'pos-1', method: operation ?? 'purchase', status };
      const more = { payment_id: `p-${orderId}`, mode: 'direct', amount: 1, currency: 'XTS' };
      return { status: 200, record: { ...record, ...more, created_at: '2026-11-25 09:00:00' } };
    },
  };
  const up = () => {
    down = false;
  };
  return { api, asked, up };
}

function watchOf(api: ResendClient, more: Partial<PaymentWatchOptions<undefined>> = {}) {
  let now = T;
  const store = new MemoryWatchStore();
  const logged: string[] = [];
  const overdue: OverduePayment[] = [];
  const outages: WatchOutage[] = [];
  const watch = createPaymentWatch({
    api,
    webhook: { process: async (_n: Notification) => 'handled' as const },
    store,
    now: () => now,
    requestsPerSecond: 1000,
    logger: { warn: (line: string) => logged.push(line) },
    onOverdue: (p) => overdue.push(p),
    onUnreachable: (o) => outages.push(o),
    ...more,
  });
  /** `runs` runs `retryAfterMs` (15 minutes) apart, the first when the payments are overdue. */
  const run = async (runs: number) => {
    const reports = [];
    for (let i = 0; i < runs; i++) {
      now += 15 * MINUTE;
      reports.push(await watch.reconcileOverdue());
    }
    return reports;
  };
  const skip = (ms: number) => {
    now += ms;
  };
  return { watch, store, logged, overdue, outages, run, skip };
}

describe('the payment watch while the service’s API cannot be reached', () => {
  it.each(Object.keys(ERRORS))(
    'counts no try for %s: an outage longer than maxTries × retryAfterMs reports nothing, the payments are settled once it answers',
    async (name) => {
      const s = service(ERRORS[name], 'success');
      const w = watchOf(s.api);
      await w.watch.register({ orderId: 'a' });
      await w.watch.register({ orderId: 'b', operation: 'auth' });
      const during = await w.run(5);
      expect(during.map((r) => r.watching.map((p) => [p.orderId, p.tries]))).toEqual(
        Array(5).fill([
          ['a', 0],
          ['b', 0],
        ]),
      );
      expect(w.overdue).toEqual([]);
      s.up();
      const [after] = await w.run(1);
      expect(after!.settled.map((p) => [p.orderId, p.tries])).toEqual([
        ['a', 1],
        ['b', 1],
      ]);
      expect(w.store.size).toBe(0);
      expect(s.asked).toHaveLength(12);
      expect(w.overdue).toEqual([]);
    },
  );

  it('reports the outage once per run (log and onUnreachable), naming its codes and the first error, no secret', async () => {
    const { api } = service();
    const w = watchOf(api);
    for (const orderId of ['a', 'b', 'c']) await w.watch.register({ orderId });
    await w.run(2);
    expect(w.outages).toHaveLength(2);
    expect(w.outages[0]!.payments.map((p) => p.orderId)).toEqual(['a', 'b', 'c']);
    expect((w.outages[0]!.error as ApiError).code).toBe('api.network');
    expect(w.logged).toEqual(
      Array(2).fill(
        "[@payhook/payments] payment watch: the service's API could not be reached about 3 payment(s) (api.network: 3): no try counted, asked again in 900000 ms (retryAfterMs). First error: GET /api/v1/pos-1/orders/o/purchase failed: ECONNREFUSED",
      ),
    );
  });

  it('still counts the runs the service answered: unsettled after maxTries answered runs, whatever the outage between', async () => {
    const s = service(NETWORK, undefined);
    const w = watchOf(s.api, { maxTries: 2 });
    await w.watch.register({ orderId: 'o' });
    await w.run(3);
    s.up();
    const [first, second] = await w.run(2);
    expect(first!.watching.map((p) => [p.orderId, p.tries])).toEqual([['o', 1]]);
    expect(second!.overdue).toEqual([
      expect.objectContaining({ orderId: 'o', tries: 2, reason: 'unsettled', lastResult: 'requested' }),
    ]);
  });

  it('counts a try for a refusal the service answered (api.refused, api.unauthorized)', async () => {
    const refused = () => new ApiError('api.unauthorized', 'GET … answered 401', { status: 401 });
    const w = watchOf(service(refused).api);
    await w.watch.register({ orderId: 'o' });
    const reports = await w.run(3);
    expect(reports[2]!.overdue).toEqual([
      expect.objectContaining({ tries: 3, reason: 'unsettled', errorCode: 'api.unauthorized' }),
    ]);
    expect(w.outages).toEqual([]);
  });

  it('reports a payment it could not ask about for unreachableAfterMs once, as api_unreachable, and stops watching it', async () => {
    const messages: WatchMessage[] = [];
    const listen = (m: unknown) => messages.push(m as WatchMessage);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.watch, listen);
    const w = watchOf(service().api, { unreachableAfterMs: 60 * MINUTE });
    try {
      await w.watch.register({ orderId: 'o' });
      // Unreachable since the first run (15 minutes in): reported by the run 60 minutes after it.
      const reports = await w.run(6);
      expect(reports.map((r) => r.overdue.length)).toEqual([0, 0, 0, 0, 1, 0]);
    } finally {
      diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.watch, listen);
    }
    expect(w.overdue).toEqual([
      {
        orderId: 'o',
        operation: 'purchase',
        createdAt: new Date(T),
        tries: 0,
        reason: 'api_unreachable',
        lastResult: 'failed',
        errorCode: 'api.network',
      },
    ]);
    expect(messages).toEqual([{ reason: 'api_unreachable', operation: 'purchase', tries: 0 }]);
    expect(w.logged.filter((line) => line.includes('could not be asked about order "o"'))).toHaveLength(1);
    expect(w.store.size).toBe(0);
  });

  it('reports api_unreachable only after unreachableAfterMs of failed runs, not for one blip of an old payment', async () => {
    const HOUR = 60 * MINUTE;
    const s = service(NETWORK, 'pending');
    const w = watchOf(s.api);
    await w.watch.register({ orderId: 'late', deadlineMs: 48 * HOUR });
    await w.watch.register({ orderId: 'paused' });
    w.skip(48 * HOUR); // the schedule stopped for two days
    const [blip] = await w.run(1);
    expect(blip!.overdue).toEqual([]);
    expect(blip!.watching.map((p) => [p.orderId, p.unreachableSince])).toEqual([
      ['paused', T + 48 * HOUR + 15 * MINUTE],
      ['late', T + 48 * HOUR + 15 * MINUTE],
    ]);
    w.skip(20 * HOUR);
    s.up();
    await w.run(1); // answered: unreachable no longer
    expect(w.overdue).toEqual([]);
  });

  it('counts unreachableAfterMs from the last run that reached the service', async () => {
    const HOUR = 60 * MINUTE;
    let down = true;
    const api: ResendClient = {
      async resend() {
        if (down) throw NETWORK();
        return { status: 200, record: undefined };
      },
    };
    const w = watchOf(api, { maxTries: 10 });
    await w.watch.register({ orderId: 'o' });
    await w.run(1);
    w.skip(20 * HOUR);
    down = false;
    await w.run(1);
    down = true;
    w.skip(20 * HOUR);
    const [third] = await w.run(1);
    expect(third!.overdue).toEqual([]);
    w.skip(24 * HOUR - 15 * MINUTE); // 24 hours after the third run, the first to fail since
    const [fourth] = await w.run(1);
    expect(fourth!.overdue).toEqual([expect.objectContaining({ orderId: 'o', reason: 'api_unreachable' })]);
  });

  it('stops asking after 3 unreachable answers in a row: the rest of the batch is given back and reported in the one outage line', async () => {
    const s = service(NETWORK, 'success');
    const w = watchOf(s.api);
    for (let i = 0; i < 12; i++) await w.watch.register({ orderId: `o-${i}` });
    const [during] = await w.run(1);
    // The reconciler's 4 workers: at most 3 calls under way when the third failure lands.
    expect(s.asked.length).toBeGreaterThanOrEqual(3);
    expect(s.asked.length).toBeLessThanOrEqual(6);
    expect(during!.watching.map((p) => p.tries)).toEqual(Array(12).fill(0));
    expect(w.outages).toHaveLength(1);
    expect(w.outages[0]!.payments).toHaveLength(12);
    const notAsked = 12 - s.asked.length;
    expect(w.logged).toEqual([
      expect.stringContaining(
        `could not be reached about 12 payment(s) (api.network: ${s.asked.length}; ${notAsked} not asked after 3 failures in a row): no try counted, asked again in 900000 ms`,
      ),
    ]);
    s.up();
    const [after] = await w.run(1);
    expect(after!.settled).toHaveLength(12);
  });

  it('keeps asking while the unreachable answers are not in a row', async () => {
    let calls = 0;
    const api: ResendClient = {
      async resend() {
        calls++;
        if (calls % 3 === 0) return { status: 200, record: undefined };
        throw NETWORK();
      },
    };
    const w = watchOf(api, { requestsPerSecond: 1000 });
    for (let i = 0; i < 9; i++) await w.watch.register({ orderId: `o-${i}` });
    await w.run(1);
    expect(calls).toBe(9);
  });

  it('words the outage line for payments the run reported api_unreachable: not asked again', async () => {
    const w = watchOf(service().api, { unreachableAfterMs: 0 });
    await w.watch.register({ orderId: 'o' });
    await w.run(1);
    expect(w.logged.at(-1)).toBe(
      "[@payhook/payments] payment watch: the service's API could not be reached about 1 payment(s) (api.network: 1): 1 reported api_unreachable, no longer watched. First error: GET /api/v1/pos-1/orders/o/purchase failed: ECONNREFUSED",
    );
  });

  it('counts no try when our own store cannot take the answer (store.unavailable), but one for a handler failing', async () => {
    const s = service(NETWORK, 'success');
    s.up();
    let failure: Error | undefined = new StoreError(
      'store.unavailable',
      'the duplicate store did not answer',
    );
    const process = async (_n: Notification) => {
      if (failure) throw failure;
      return 'handled' as const;
    };
    const w = watchOf(s.api, { webhook: { process } });
    await w.watch.register({ orderId: 'o' });
    const during = await w.run(5);
    expect(during.map((r) => r.watching.map((p) => p.tries))).toEqual(Array(5).fill([0]));
    expect([w.overdue, w.outages]).toEqual([[], []]);
    failure = new WebhookError('handler.failed', 'a handler threw');
    const failing = await w.run(3);
    expect(failing[2]!.overdue).toEqual([expect.objectContaining({ reason: 'unsettled', tries: 3 })]);
  });

  it('gives back the tries and unreachableSince of the payments it could not ask about before a remove fails', async () => {
    const api: ResendClient = {
      async resend({ orderId }) {
        throw orderId === 'gone' ? new ApiError('api.not_found', 'GET … answered 404') : NETWORK();
      },
    };
    const store = new (class extends MemoryWatchStore {
      override async remove(): Promise<boolean> {
        throw new StoreError('store.unavailable', 'the watch store failed');
      }
    })();
    const watch = createPaymentWatch({
      api,
      store,
      now: () => T + 1,
      requestsPerSecond: 1000,
      logger: false,
    });
    await store.add({ orderId: 'gone', operation: 'purchase', createdAt: T, deadline: T, tries: 0 });
    await store.add({ orderId: 'a', operation: 'purchase', createdAt: T, deadline: T + 1, tries: 0 });
    await store.giveBack([
      // As a run gives it back: with the deadline its take set (here the one it was added with).
      { orderId: 'a', operation: 'purchase', createdAt: T, deadline: T + 1, tries: 0, unreachableSince: T },
    ]);
    await expect(watch.reconcileOverdue()).rejects.toThrow(StoreError);
    const [a] = (await store.take(T + MINUTE * 60, T + MINUTE * 61, 10)).filter((p) => p.orderId === 'a');
    expect([a!.tries, a!.unreachableSince]).toEqual([1, T]);
  });

  it('checks unreachableAfterMs, onUnreachable and storeTimeoutMs', () => {
    const { api } = service();
    expect(() => createPaymentWatch({ api, unreachableAfterMs: -1 })).toThrow(/unreachableAfterMs/);
    expect(() => createPaymentWatch({ api, onUnreachable: 1 as never })).toThrow(/onUnreachable/);
    expect(() => createPaymentWatch({ api, storeTimeoutMs: 0 })).toThrow(/storeTimeoutMs/);
  });
});

describe('two runs over one store, the later one reaching the service', () => {
  it('restores no old outage clock when the later run reached the service but our store failed (held)', async () => {
    const store = new MemoryWatchStore();
    const entry = { orderId: 'o', operation: 'purchase', createdAt: T, deadline: T, tries: 0 };
    await store.add(entry);
    // Every run failed to reach the service since 20 hours ago.
    const since = T - 20 * 60 * MINUTE;
    await store.giveBack([{ ...entry, unreachableSince: since }]);
    const gate = () => {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => {
        open = resolve;
      });
      return { opened, open };
    };
    const [olderAsked, olderGoes, laterProcessed, laterGoes] = [gate(), gate(), gate(), gate()];
    const older = createPaymentWatch({
      api: {
        resend: async () => {
          olderAsked.open();
          await olderGoes.opened;
          throw NETWORK();
        },
      },
      store,
      now: () => T + 15 * MINUTE,
      logger: false,
    });
    // The service answers the later run: a final record, which our own store then fails to take.
    const up = service(NETWORK, 'success');
    up.up();
    const olderRun = older.reconcileOverdue();
    await olderAsked.opened;
    const laterRun = createPaymentWatch({
      api: up.api,
      webhook: {
        process: async () => {
          laterProcessed.open();
          await laterGoes.opened;
          throw new StoreError('store.unavailable', 'the merchant’s store is down');
        },
      },
      store,
      now: () => T + 31 * MINUTE,
      logger: false,
    }).reconcileOverdue();
    await laterProcessed.opened;
    olderGoes.open();
    await olderRun;
    laterGoes.open();
    await laterRun;
    const [next] = await store.take(T + 60 * MINUTE, T + 75 * MINUTE, 10);
    expect(next!.unreachableSince).toBeUndefined();
  });
});

describe('what the watch logs and publishes, from text it did not write', () => {
  it("escapes control and bidi characters of an order id kept by a former version and of the service's message", async () => {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for.
    const raws = /[\u0000-\u001f\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;
    const memory = new MemoryWatchStore();
    const legacy = { orderId: 'o\u202e\u00851', operation: 'purchase', createdAt: T, deadline: T, tries: 2 };
    const store = {
      name: 'legacy',
      add: (p: Parameters<MemoryWatchStore['add']>[0]) => memory.add(p),
      take: async () => [{ ...legacy, tries: 3 }],
      giveBack: async () => undefined,
      remove: async () => true,
    };
    const logged: string[] = [];
    const messages: WatchMessage[] = [];
    const listen = (m: unknown) => messages.push(m as WatchMessage);
    diagnostics_channel.subscribe(PAYHOOK_CHANNELS.watch, listen);
    try {
      const unknownOrder: ResendClient = {
        resend: async () => {
          throw new ApiError('api.not_found', 'GET … answered 404', { status: 404 });
        },
      };
      const watch = createPaymentWatch({
        api: unknownOrder,
        store,
        now: () => T + 60 * MINUTE,
        logger: { warn: (line: string) => logged.push(line) },
      });
      await watch.reconcileOverdue();
      const bidi = new ApiError('api.server', 'GET … answered 503 (S-503: \u202eevil\u0085)', {
        status: 503,
      });
      const down = createPaymentWatch({
        api: { resend: async () => Promise.reject(bidi) },
        store,
        now: () => T + 60 * MINUTE,
        logger: { warn: (line: string) => logged.push(line) },
      });
      await down.reconcileOverdue();
    } finally {
      diagnostics_channel.unsubscribe(PAYHOOK_CHANNELS.watch, listen);
    }
    expect(logged).toHaveLength(2);
    for (const line of logged) expect(line).not.toMatch(raws);
    expect(logged[0]).toContain('o\\u{202e}\\u{85}1');
    expect(logged[1]).toContain('\\u{202e}evil\\u{85}');
    for (const m of messages) expect(m.operation).not.toMatch(raws);
  });
});
