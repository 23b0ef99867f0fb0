import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { recurringCharge, STORE_SECRET, signedPurchase } from '../../test/bodies.js';
import {
  base,
  countingHandler,
  DUPLICATE,
  deferred,
  formRequest,
  HANDLED,
  sleep,
} from '../../test/deliveries.js';
import { formBody, purchase } from '../../test/fixtures.js';
import { rankLedger } from '../../test/ledger.js';
import { storeCases } from '../../test/store-cases.js';
import { wrapStore } from '../../test/takeovers.js';
import { createWebhookHandler, type WebhookHandlerOptions } from '../handler.js';
import type { DedupeStore, TransactionalStore } from '../stores/contract.js';
import { MemoryStore } from '../stores/memory.js';
import { PostgresInbox, PostgresStore } from '../stores/postgres.js';

const servers = await storeCases('edges');
const STORES = servers.cases;
const TABLE = servers.table;
const APP_TABLE = servers.appTable;
const postgresUp = STORES.some((c) => c.name === 'PostgresStore' && c.up);

/** Lets `ms` pass: on fake timers by advancing them, on a real store by waiting. */
function passer(fake: boolean): (ms: number) => Promise<unknown> {
  return fake ? (ms) => vi.advanceTimersByTimeAsync(ms) : sleep;
}

/** Awaits `promise` while time passes, so timers it waits on (a copy's polling, a timeout) fire. */
async function meanwhile<T>(pass: (ms: number) => Promise<unknown>, promise: Promise<T>): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  while (!settled) await pass(5);
  return watched;
}

async function until(pass: (ms: number) => Promise<unknown>, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await pass(10);
  expect(condition()).toBe(true);
}

/** Options whose handler counts its runs and waits for `gate` (a 600 ms lease, renewed every 200 ms). */
function gated(store: DedupeStore | TransactionalStore, extra: Partial<WebhookHandlerOptions> = {}) {
  const gate = deferred();
  let runs = 0;
  const handle = () => {
    runs++;
    return gate.promise;
  };
  const timing = { leaseMs: 600, inFlightWaitMs: 50, storeTimeoutMs: 300 };
  const options: WebhookHandlerOptions = { ...base(store), ...timing, handle, ...extra };
  return { options, gate, runs: () => runs };
}

afterEach(() => {
  vi.useRealTimers();
});

describe.each(STORES)('exactly once with $name', (storeCase) => {
  describe.skipIf(!storeCase.up)('', () => {
    const pass = passer(storeCase.fake);
    beforeEach(() => {
      if (storeCase.fake) vi.useFakeTimers();
    });

    it('runs each of several handlers once per notification: a redelivery after a failure skips those that succeeded', async () => {
      const store = storeCase.make();
      const calls: string[] = [];
      let auditFails = true;
      // Two instances sharing the store: what each handler completed is remembered there, not in a process.
      const instance = () =>
        createWebhookHandler(base(store))
          .on('purchase.success', () => void calls.push('purchase.success'))
          .on('purchase', () => void calls.push('purchase'))
          .on('recurring.success', () => void calls.push('recurring.success'))
          .on('recurring', () => void calls.push('recurring'))
          .onAny(() => {
            calls.push('onAny');
            if (auditFails) {
              auditFails = false;
              throw new Error('the audit log is down');
            }
          });
      const [a, b] = [instance(), instance()];
      const body = recurringCharge();

      const failed = await a(formRequest(body), undefined);
      expect(failed.status).toBe(500);
      expect(JSON.parse(failed.body).error.code).toBe('handler.failed');
      const order = ['purchase.success', 'purchase', 'recurring.success', 'recurring', 'onAny'];
      expect(calls).toEqual(order);

      expect((await b(formRequest(body), undefined)).body).toBe(HANDLED);
      expect((await a(formRequest(body), undefined)).body).toBe(DUPLICATE);
      // A transactional store rolled the first run's writes back: all handlers run again, their effect once.
      expect(calls).toEqual(storeCase.transactional ? [...order, ...order] : [...order, 'onAny']);
    });

    // The one real-time case per real store: the lease lives in the store's own clock.
    it('keeps the claim while a handler runs longer than the lease: a copy to another instance never runs it again', async () => {
      const { options, gate, runs } = gated(storeCase.make());
      const [a, b] = [createWebhookHandler(options), createWebhookHandler(options)];
      const body = signedPurchase();
      const first = a(formRequest(body), undefined);
      await until(pass, () => runs() === 1);
      await pass(2_000); // more than three leases

      const copy = await meanwhile(pass, b(formRequest(body), undefined));
      // The others see the renewed lease; the inbox's copy waits on the row lock until storeTimeoutMs.
      expect(copy.status).toBe(409);
      expect(JSON.parse(copy.body).error.code).toBe('notification.in_flight');
      gate.resolve();
      expect((await meanwhile(pass, first)).body).toBe(HANDLED);
      expect((await meanwhile(pass, b(formRequest(body), undefined))).body).toBe(DUPLICATE);
      expect(runs()).toBe(1);
    });

    it.runIf(storeCase.fake)(
      'answers 503 handler.timeout past handlerTimeoutMs, never starts the run again while it goes on, then commits it',
      async () => {
        const { options, gate, runs } = gated(storeCase.make(), { handlerTimeoutMs: 200 });
        const webhook = createWebhookHandler(options);
        const body = signedPurchase();

        const answer = webhook(formRequest(body), undefined);
        await pass(200);
        const timedOut = await answer;
        expect(timedOut.status).toBe(503);
        expect(timedOut.headers['retry-after']).toBe('1');
        expect(JSON.parse(timedOut.body).error).toEqual({
          code: 'handler.timeout',
          message:
            '[@payhook/core] the application handler did not finish within 200 ms (handlerTimeoutMs): answered 503 so the service retries; the run goes on and will not be started again while it does.',
        });
        await pass(1_000); // past the lease, had it not been renewed
        expect((await meanwhile(pass, webhook(formRequest(body), undefined))).status).toBe(409);
        const other = await meanwhile(pass, createWebhookHandler(options)(formRequest(body), undefined));
        expect(other.status).toBe(409);
        expect(runs()).toBe(1);

        gate.resolve();
        let after = await meanwhile(pass, webhook(formRequest(body), undefined));
        for (let i = 0; i < 50 && after.status !== 200; i++) {
          await pass(20);
          after = await meanwhile(pass, webhook(formRequest(body), undefined));
        }
        expect(after.body).toBe(DUPLICATE);
        expect(runs()).toBe(1);
      },
    );

    it('handles a signed notification whose id is 3,000 characters long, then answers duplicate', async () => {
      const store = storeCase.make();
      const { webhook, runs } = countingHandler(base(store));
      const body = formBody(purchase({ payment_id: `p-${randomUUID()}-${'x'.repeat(3_000)}` }), STORE_SECRET);
      expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
      expect((await webhook(formRequest(body), undefined)).body).toBe(DUPLICATE);
      expect(runs()).toBe(1);
    });

    it('records a stale notification once with a ledger: its redelivery answers duplicate', async () => {
      const store = storeCase.make();
      const { ledger, after } = rankLedger();
      const webhook = createWebhookHandler({ ...base(store), ledger, handle: () => {} });
      const paymentId = randomUUID();
      const success = formBody(purchase({ payment_id: paymentId }), STORE_SECRET);
      const late = formBody(
        purchase({ payment_id: paymentId, status: 'pending', status_code: '2122' }),
        STORE_SECRET,
      );
      expect((await webhook(formRequest(success), undefined)).body).toBe(HANDLED);
      expect((await webhook(formRequest(late), undefined)).body).toBe('{"ok":true,"outcome":"stale"}');
      expect((await webhook(formRequest(late), undefined)).body).toBe(DUPLICATE);
      expect(after).toEqual(['handle:success', 'stale:pending']);
    });

    // The inbox's late claim is rolled back instead: see the frozen PostgreSQL test below.
    it.skipIf(storeCase.transactional)(
      'releases a claim that landed after storeTimeoutMs, so the redelivery is handled at once',
      async () => {
        const inner = storeCase.make() as DedupeStore;
        const gate = deferred();
        const released = deferred();
        let slow = true;
        const store = wrapStore(inner, {
          async claim(key, leaseMs) {
            if (slow) await gate.promise;
            return inner.claim(key, leaseMs);
          },
          release: async (key, token) => {
            await inner.release(key, token);
            released.resolve();
          },
        });
        const { webhook, runs } = countingHandler({
          ...base(store),
          storeTimeoutMs: 100,
          inFlightWaitMs: 0,
        });
        const body = signedPurchase();
        const answer = webhook(formRequest(body), undefined);
        await pass(100);
        const frozen = await answer;
        expect(frozen.status).toBe(503);
        expect(JSON.parse(frozen.body).error.code).toBe('store.unavailable');
        slow = false;
        gate.resolve();
        await released.promise; // the late claim lands, and is released
        expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
        expect(runs()).toBe(1);
      },
    );
  });
});

describe('failOpen and a store that is only slow', () => {
  it('answers 503 instead of running the handler without the store: the slow store may be serving another copy', async () => {
    vi.useFakeTimers();
    const memory = new MemoryStore();
    const slow = wrapStore(memory, { name: 'slow', claim: () => new Promise(() => {}) });
    const { webhook, runs } = countingHandler({
      ...base(slow),
      failOpen: true,
      storeTimeoutMs: 50,
    });
    const answer = webhook(formRequest(signedPurchase()), undefined);
    await vi.advanceTimersByTimeAsync(50);
    const result = await answer;
    expect(result.status).toBe(503);
    expect(runs()).toBe(0);
  });
});

describe('a transactional store slow to start its transaction (a busy pool)', () => {
  /** An inbox whose transaction starts the work after `connectMs` (waiting for a connection), then commits it. */
  function slowToConnect(connectMs: number): TransactionalStore {
    return {
      name: 'slow-to-connect',
      async transaction(_key, work) {
        await sleep(connectMs);
        return { status: 'done', value: await work(undefined) };
      },
    };
  }

  it.each([
    ['takes 800 ms', 200, 800, undefined],
    ['takes 1,200 ms', 503, 1_200, 'handler.timeout'],
  ] as const)(
    'gives the handlers all of handlerTimeoutMs from when they start: after 1.5 s of connecting, a handler that %s is answered %i',
    async (_, status, handlerMs, code) => {
      vi.useFakeTimers();
      const webhook = createWebhookHandler({
        ...base(slowToConnect(1_500)),
        storeTimeoutMs: 2_000,
        handlerTimeoutMs: 1_000,
        handle: () => sleep(handlerMs),
      });
      const answer = webhook(formRequest(signedPurchase()), undefined);
      await vi.advanceTimersByTimeAsync(1_500 + handlerMs + 300);
      const result = await answer;
      expect(result.status).toBe(status);
      if (code !== undefined) expect(JSON.parse(result.body).error.code).toBe(code);
      await vi.advanceTimersByTimeAsync(1_000);
    },
  );
});

describe.skipIf(!postgresUp)('a frozen PostgreSQL (a lock held on the inbox table)', () => {
  it.each([
    ['store', 503, 'store.unavailable'],
    ['unbatched store', 503, 'store.unavailable'],
    ['inbox', 503, 'store.unavailable'],
  ] as const)(
    'the %s answers %i %s after storeTimeoutMs, and once the table is free the redelivery is handled',
    async (which, status, code) => {
      const store =
        which === 'inbox'
          ? new PostgresInbox({ pool: servers.pool(), table: TABLE })
          : new PostgresStore({ pool: servers.pool(), table: TABLE, batch: which !== 'unbatched store' });
      const { webhook, runs } = countingHandler({
        ...base(store),
        storeTimeoutMs: 200,
        inFlightWaitMs: 0,
      });
      const body = signedPurchase();
      const locker = await servers.pool().connect();
      try {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${TABLE} IN ACCESS EXCLUSIVE MODE`);
        const frozen = await webhook(formRequest(body), undefined);
        expect(frozen.status).toBe(status);
        expect(JSON.parse(frozen.body).error.code).toBe(code);
        // The inbox waited on the lock in the database and gave its connection back (lock_timeout): not a copy
        // in progress (409), the table held by another session (503).
        if (which !== 'inbox') {
          expect(JSON.parse(frozen.body).error.message).toBe(
            "[@payhook/core] the duplicate store (postgres) did not answer within 200 ms (storeTimeoutMs); nothing was marked processed, so the service's retry is safe.",
          );
        }
      } finally {
        await locker.query('COMMIT');
        locker.release();
      }
      // The claim that waited on the lock lands, and is released or rolled back: then the redelivery is handled.
      let after = await webhook(formRequest(body), undefined);
      for (let i = 0; i < 50 && after.status !== 200; i++) {
        await sleep(20);
        after = await webhook(formRequest(body), undefined);
      }
      expect(after.body).toBe(HANDLED);
      expect(runs()).toBe(1);
    },
  );
});

describe.skipIf(!postgresUp)('several handlers with the PostgreSQL inbox', () => {
  it('rolls back every handler write on a failure, so running them all again writes each once', async () => {
    const inbox = new PostgresInbox<pg.PoolClient>({ pool: servers.pool(), table: TABLE });
    const id = randomUUID();
    let auditFails = true;
    const webhook = createWebhookHandler(base(inbox))
      .on('purchase.success', async (_n, _c, delivery) => {
        await inbox.client(delivery).query(`INSERT INTO ${APP_TABLE} (id) VALUES ($1)`, [`${id}:fulfil`]);
      })
      .onAny(async (_n, _c, delivery) => {
        await inbox.client(delivery).query(`INSERT INTO ${APP_TABLE} (id) VALUES ($1)`, [`${id}:audit`]);
        if (auditFails) {
          auditFails = false;
          throw new Error('the audit log is down');
        }
      });
    const body = recurringCharge();
    expect((await webhook(formRequest(body), undefined)).status).toBe(500);
    const rows = () =>
      servers.pool().query(`SELECT id FROM ${APP_TABLE} WHERE id LIKE $1 ORDER BY id`, [`${id}:%`]);
    expect((await rows()).rows).toEqual([]);
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect((await rows()).rows).toEqual([{ id: `${id}:audit` }, { id: `${id}:fulfil` }]);
  });
});
