import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM, formRequest, STORE_SECRET, signedPurchase } from '../test/deliveries.js';
import { formBody, purchase } from '../test/fixtures.js';
import { DATABASE_URL, REDIS_URL, reachPostgres, reachRedis } from '../test/servers.js';
import type { DedupeStore, TransactionalStore } from './dedupe.js';
import { createWebhookHandler, type WebhookHandlerOptions } from './handler.js';
import { MemoryStore } from './stores/memory.js';
import { migrate, PostgresInbox, PostgresStore } from './stores/postgres.js';
import { RedisStore } from './stores/redis.js';

const redisUp = await reachRedis();
const postgresUp = await reachPostgres();
const TABLE = `payhook_edges_${process.pid}`;
const APP_TABLE = `payhook_edges_app_${process.pid}`;

const HANDLED = '{"ok":true,"outcome":"handled"}';
const DUPLICATE = '{"ok":true,"outcome":"duplicate"}';

let redis: Redis | undefined;
let pool: pg.Pool | undefined;

beforeAll(async () => {
  if (redisUp) redis = new Redis(REDIS_URL);
  if (postgresUp) {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 });
    await pool.query(`DROP TABLE IF EXISTS ${TABLE}, ${APP_TABLE}`);
    await migrate(pool, { table: TABLE });
    await pool.query(`CREATE TABLE ${APP_TABLE} (id text PRIMARY KEY)`);
  }
});

afterAll(async () => {
  if (redis) {
    const keys = await redis.keys(`payhook-test:edges:${process.pid}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
  await pool?.query(`DROP TABLE IF EXISTS ${TABLE}, ${APP_TABLE}`);
  await pool?.end();
});

interface StoreCase {
  name: string;
  up: boolean;
  /** A transactional store rolls every handler's writes back on a failure, so all run again. */
  transactional: boolean;
  make(): DedupeStore | TransactionalStore;
}

const STORES: StoreCase[] = [
  { name: 'MemoryStore', up: true, transactional: false, make: () => new MemoryStore() },
  {
    name: 'RedisStore',
    up: redisUp,
    transactional: false,
    make: () => new RedisStore({ client: redis!, prefix: `payhook-test:edges:${process.pid}:` }),
  },
  {
    name: 'PostgresStore',
    up: postgresUp,
    transactional: false,
    make: () => new PostgresStore({ pool: pool!, table: TABLE }),
  },
  {
    name: 'PostgresInbox',
    up: postgresUp,
    transactional: true,
    make: () => new PostgresInbox({ pool: pool!, table: TABLE }),
  },
];

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await sleep(10);
  expect(condition()).toBe(true);
}

/** A recurring charge: it reaches `purchase.success`, `purchase`, `recurring.success`, `recurring` and `onAny`. */
function recurringCharge(overrides: Record<string, unknown> = {}): string {
  return formBody(
    purchase({
      payment_id: randomUUID(),
      transaction_id: randomUUID(),
      recurring: { id: 'sub-1', status: 'active' },
      ...overrides,
    }),
    STORE_SECRET,
  );
}

function base(store: DedupeStore | TransactionalStore): WebhookHandlerOptions {
  return { secret: STORE_SECRET, store, logger: false };
}

/** Options whose handler counts its runs and waits for `gate` (a 600 ms lease, renewed every 200 ms). */
function gated(store: DedupeStore | TransactionalStore, extra: Partial<WebhookHandlerOptions> = {}) {
  const gate = deferred();
  let runs = 0;
  const options: WebhookHandlerOptions = {
    ...base(store),
    leaseMs: 600,
    inFlightWaitMs: 50,
    storeTimeoutMs: 300,
    handle: () => {
      runs++;
      return gate.promise;
    },
    ...extra,
  };
  return { options, gate, runs: () => runs };
}

describe.each(STORES)('exactly once with $name', (storeCase) => {
  describe.skipIf(!storeCase.up)('', () => {
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

    it('keeps the claim while a handler runs longer than the lease: a copy to another instance never runs it again', async () => {
      const { options, gate, runs } = gated(storeCase.make());
      const [a, b] = [createWebhookHandler(options), createWebhookHandler(options)];
      const body = signedPurchase();
      const first = a(formRequest(body), undefined);
      await until(() => runs() === 1);
      await sleep(2_000); // more than three leases

      const copy = await b(formRequest(body), undefined);
      // The others see the renewed lease; the inbox's copy waits on the row lock until storeTimeoutMs.
      expect(copy.status).toBe(409);
      expect(JSON.parse(copy.body).error.code).toBe('notification.in_flight');
      gate.resolve();
      expect((await first).body).toBe(HANDLED);
      expect((await b(formRequest(body), undefined)).body).toBe(DUPLICATE);
      expect(runs()).toBe(1);
    });

    it('answers 503 handler.timeout past handlerTimeoutMs, never starts the run again while it goes on, then commits it', async () => {
      const { options, gate, runs } = gated(storeCase.make(), { handlerTimeoutMs: 200 });
      const webhook = createWebhookHandler(options);
      const body = signedPurchase();

      const timedOut = await webhook(formRequest(body), undefined);
      expect(timedOut.status).toBe(503);
      expect(timedOut.headers['retry-after']).toBe('1');
      expect(JSON.parse(timedOut.body).error).toEqual({
        code: 'handler.timeout',
        message:
          '[@payhook/core] the application handler did not finish within 200 ms (handlerTimeoutMs): answered 503 so the service retries; the run goes on and will not be started again while it does.',
      });
      await sleep(1_000); // past the lease, had it not been renewed
      expect((await webhook(formRequest(body), undefined)).status).toBe(409);
      const other = await createWebhookHandler(options)(formRequest(body), undefined);
      expect(other.status).toBe(409);
      expect(runs()).toBe(1);

      gate.resolve();
      let after = await webhook(formRequest(body), undefined);
      for (let i = 0; i < 50 && after.status !== 200; i++) {
        await sleep(20);
        after = await webhook(formRequest(body), undefined);
      }
      expect(after.body).toBe(DUPLICATE);
      expect(runs()).toBe(1);
    });

    it('handles a signed notification whose id is 3,000 characters long, then answers duplicate', async () => {
      const store = storeCase.make();
      let runs = 0;
      const webhook = createWebhookHandler({ ...base(store), handle: () => void runs++ });
      const body = formBody(purchase({ payment_id: `p-${randomUUID()}-${'x'.repeat(3_000)}` }), STORE_SECRET);
      expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
      expect((await webhook(formRequest(body), undefined)).body).toBe(DUPLICATE);
      expect(runs).toBe(1);
    });

    // The inbox's late claim is rolled back instead: see the frozen PostgreSQL test below.
    it.skipIf(storeCase.transactional)(
      'releases a claim that landed after storeTimeoutMs, so the redelivery is handled at once',
      async () => {
        const inner = storeCase.make() as DedupeStore;
        let slow = true;
        const store: DedupeStore = {
          name: inner.name,
          async claim(key, leaseMs) {
            if (slow) await sleep(300);
            return inner.claim(key, leaseMs);
          },
          renew: (key, token, leaseMs) => inner.renew(key, token, leaseMs),
          commit: (key, token, ttlMs) => inner.commit(key, token, ttlMs),
          release: (key, token) => inner.release(key, token),
        };
        let runs = 0;
        const webhook = createWebhookHandler({
          ...base(store),
          storeTimeoutMs: 100,
          inFlightWaitMs: 0,
          handle: () => void runs++,
        });
        const body = signedPurchase();
        const frozen = await webhook(formRequest(body), undefined);
        expect(frozen.status).toBe(503);
        expect(JSON.parse(frozen.body).error.code).toBe('store.unavailable');
        slow = false;
        await sleep(400); // the late claim lands, and is released
        expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
        expect(runs).toBe(1);
      },
    );
  });
});

describe('failOpen and a store that is only slow', () => {
  it('answers 503 instead of running the handler without the store: the slow store may be serving another copy', async () => {
    const memory = new MemoryStore();
    const slow: DedupeStore = {
      name: 'slow',
      claim: async (key, leaseMs) => {
        await sleep(200);
        return memory.claim(key, leaseMs);
      },
      renew: (key, token, leaseMs) => memory.renew(key, token, leaseMs),
      commit: (key, token, ttlMs) => memory.commit(key, token, ttlMs),
      release: (key, token) => memory.release(key, token),
    };
    let runs = 0;
    const webhook = createWebhookHandler({
      ...base(slow),
      failOpen: true,
      storeTimeoutMs: 50,
      handle: () => void runs++,
    });
    const result = await webhook(formRequest(signedPurchase()), undefined);
    expect(result.status).toBe(503);
    expect(runs).toBe(0);
  });
});

describe.skipIf(!postgresUp)('a frozen PostgreSQL (a lock held on the inbox table)', () => {
  it.each([
    ['store', 503, 'store.unavailable'],
    ['inbox', 409, 'notification.in_flight'],
  ] as const)(
    'the %s answers %i %s after storeTimeoutMs, and once the table is free the redelivery is handled',
    async (which, status, code) => {
      const store =
        which === 'store'
          ? new PostgresStore({ pool: pool!, table: TABLE })
          : new PostgresInbox({ pool: pool!, table: TABLE });
      let runs = 0;
      const webhook = createWebhookHandler({
        ...base(store),
        storeTimeoutMs: 200,
        inFlightWaitMs: 0,
        handle: () => void runs++,
      });
      const body = signedPurchase();
      const locker = await pool!.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${TABLE} IN ACCESS EXCLUSIVE MODE`);
        const frozen = await webhook(formRequest(body), undefined);
        expect(frozen.status).toBe(status);
        expect(JSON.parse(frozen.body).error.code).toBe(code);
        // The inbox waited on the lock in the database and gave its connection back (lock_timeout).
        if (which === 'store') {
          expect(JSON.parse(frozen.body).error.message).toBe(
            "[@payhook/core] the duplicate store (postgres) did not answer within 200 ms (storeTimeoutMs); nothing was marked processed, so the service's retry is safe.",
          );
        }
      } finally {
        await locker.query('COMMIT');
        locker.release();
      }
      await sleep(300); // the claim that waited on the lock lands, and is released or rolled back
      expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
      expect(runs).toBe(1);
    },
  );
});

describe.skipIf(!postgresUp)('several handlers with the PostgreSQL inbox', () => {
  it('rolls back every handler write on a failure, so running them all again writes each once', async () => {
    const inbox = new PostgresInbox<pg.PoolClient>({ pool: pool!, table: TABLE });
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
    const rows = () => pool!.query(`SELECT id FROM ${APP_TABLE} WHERE id LIKE $1 ORDER BY id`, [`${id}:%`]);
    expect((await rows()).rows).toEqual([]);
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect((await rows()).rows).toEqual([{ id: `${id}:audit` }, { id: `${id}:fulfil` }]);
  });
});

describe('recurring charges without transaction_id', () => {
  const charge = (overrides: Record<string, unknown>) =>
    formBody(
      purchase({ transaction_id: undefined, recurring: { id: 'sub-9', status: 'active' }, ...overrides }),
      STORE_SECRET,
    );

  it('handles two charges of one subscription told apart by created_at and processed_at; a redelivery is a duplicate', async () => {
    const seen: string[] = [];
    const webhook = createWebhookHandler({
      ...base(new MemoryStore()),
      handle: (n) => void seen.push(String(n.processed_at)),
    });
    const first = charge({ created_at: '2026-12-01T10:00:00', processed_at: '2026-12-01T10:00:02' });
    const second = charge({ created_at: '2027-01-01T10:00:00', processed_at: '2027-01-01T10:00:02' });
    expect((await webhook(formRequest(first), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(second), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(first), undefined)).body).toBe(DUPLICATE);
    expect(seen).toEqual(['2026-12-01T10:00:02', '2027-01-01T10:00:02']);
  });

  it('never gives two charges one key when processed_at is null', async () => {
    let runs = 0;
    const webhook = createWebhookHandler({ ...base(new MemoryStore()), handle: () => void runs++ });
    const body = charge({ processed_at: null });
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect(runs).toBe(2);
  });

  it('handles a charge that carries nothing to tell it apart every time, and warns', async () => {
    const warnings: string[] = [];
    let runs = 0;
    const webhook = createWebhookHandler({
      secret: STORE_SECRET,
      logger: { warn: (message: string) => void warnings.push(message), error: () => {} },
      handle: () => void runs++,
    });
    const body = charge({ payment_id: 'pay-42', processed_at: undefined });
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect(runs).toBe(2);
    expect(warnings).toEqual(
      Array(2).fill(
        '[@payhook/core] a purchase notification of payment pay-42 carries nothing that tells it apart from another (a recurring charge without transaction_id or processed_at): it is handled without duplicate detection.',
      ),
    );
  });
});

describe('what the handler logs when the application fails', () => {
  it('gives the default logger the thrown error itself (message and stack), and onError the same as cause', async () => {
    const logged: unknown[][] = [];
    const causes: unknown[] = [];
    const thrown = new Error('the shipping service answered 502');
    const webhook = createWebhookHandler({
      secret: STORE_SECRET,
      logger: { warn: () => {}, error: (...args: unknown[]) => void logged.push(args) },
      onError: (error) => void causes.push(error.cause),
      handle: () => {
        throw thrown;
      },
    });
    const result = await webhook({ ...formRequest(signedPurchase()), headers: FORM }, undefined);
    expect(result.status).toBe(500);
    expect(logged).toEqual([
      [
        '[@payhook/core] the application handler failed; the notification was not marked processed and will be handled when redelivered. (handler.failed)',
        thrown,
      ],
    ]);
    expect(causes).toEqual([thrown]);
  });
});

describe('handler identity across deploys', () => {
  it('names a step by its function: a handler added before the others still runs on the redelivery', async () => {
    const store = new MemoryStore();
    const calls: string[] = [];
    let auditFails = true;
    const fulfil = () => void calls.push('fulfil');
    const audit = () => {
      calls.push('audit');
      if (auditFails) {
        auditFails = false;
        throw new Error('the audit log is down');
      }
    };
    const emailReceipt = () => void calls.push('emailReceipt');
    const body = recurringCharge();
    const before = createWebhookHandler(base(store)).on('purchase.success', fulfil).onAny(audit);
    expect((await before(formRequest(body), undefined)).status).toBe(500);
    // The next deploy adds a handler in front of fulfil for the same event.
    const after = createWebhookHandler(base(store))
      .on('purchase.success', emailReceipt)
      .on('purchase.success', fulfil)
      .onAny(audit);
    expect((await after(formRequest(body), undefined)).body).toBe(HANDLED);
    expect(calls).toEqual(['fulfil', 'audit', 'emailReceipt', 'audit']);
  });
});

describe('a lone handler that returns without a promise (handled without tracking a run)', () => {
  it('releases the claim when reading what it returned throws, as awaiting it would: the redelivery is handled', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const webhook = createWebhookHandler({
      ...base(new MemoryStore()),
      // Long enough that a claim left behind would still hold the redelivery (409).
      leaseMs: 60_000,
      inFlightWaitMs: 0,
      onError: (error) => void errors.push(error.cause),
      handle: () => {
        runs++;
        if (runs > 1) return undefined;
        return new Proxy(
          {},
          {
            get(_, property) {
              throw new Error(`a proxy that refuses unknown properties: ${String(property)}`);
            },
          },
        );
      },
    });
    const body = signedPurchase();
    const failed = await webhook(formRequest(body), undefined);
    expect(failed.status).toBe(500);
    expect(failed.error?.message).toContain('the application handler failed');
    expect((errors[0] as Error).message).toBe('a proxy that refuses unknown properties: then');
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(body), undefined)).body).toBe(DUPLICATE);
    expect(runs).toBe(2);
  });

  it('makes a copy wait for a commit still on its way, even past the lease, instead of running the handler again', async () => {
    const memory = new MemoryStore();
    // Claims at once, commits over the network: the commit lands after the 50 ms lease has run out.
    const store: DedupeStore = {
      name: 'slow-commit',
      claim: (key, leaseMs) => memory.claim(key, leaseMs),
      renew: (key, token, leaseMs) => memory.renew(key, token, leaseMs),
      commit: async (key, token, ttlMs) => {
        await sleep(200);
        memory.commit(key, token, ttlMs);
      },
      release: (key, token) => memory.release(key, token),
    };
    let runs = 0;
    const webhook = createWebhookHandler({
      ...base(store),
      leaseMs: 50,
      handle: () => {
        runs++;
      },
    });
    const body = signedPurchase();
    const first = webhook(formRequest(body), undefined);
    await sleep(100);
    const copy = await webhook(formRequest(body), undefined);
    expect((await first).body).toBe(HANDLED);
    expect(copy.body).toBe(DUPLICATE);
    expect(runs).toBe(1);
  });
});

describe('a handler whose promise never settles', () => {
  it('is given up after ten handler timeouts: its claim is no longer renewed, and a redelivery handles the notification', async () => {
    const store = new MemoryStore();
    const errors: string[] = [];
    let runs = 0;
    const options: WebhookHandlerOptions = {
      ...base(store),
      leaseMs: 300,
      handlerTimeoutMs: 50,
      inFlightWaitMs: 0,
      onError: (error) => void errors.push(error.code),
      handle: () => {
        runs++;
        return new Promise(() => {});
      },
    };
    const webhook = createWebhookHandler(options);
    const body = signedPurchase();
    expect((await webhook(formRequest(body), undefined)).status).toBe(503);
    await sleep(1_200); // ten timeouts (500 ms), then the lease runs out (300 ms)
    expect((await webhook(formRequest(body), undefined)).status).toBe(503);
    expect(runs).toBe(2);
    expect(errors.slice(0, 2)).toEqual(['handler.timeout', 'handler.timeout']);
  });
});

describe('options that cannot work', () => {
  it.each([
    ['leaseMs', 0],
    ['storeTimeoutMs', Number.POSITIVE_INFINITY],
    ['handlerTimeoutMs', 2 ** 31],
    ['inFlightWaitMs', -1],
  ] as const)('refuses %s: %s at construction, naming it', (name, value) => {
    expect(() => createWebhookHandler({ secret: STORE_SECRET, [name]: value })).toThrow(
      `[@payhook/core] ${name} must be a number of milliseconds from ${name === 'inFlightWaitMs' ? 0 : 1} to 2147483647, not ${value}.`,
    );
  });

  it('refuses failOpen with a transactional store', () => {
    const inbox: TransactionalStore = {
      name: 'inbox',
      transaction: () => Promise.reject(new Error('unused')),
    };
    expect(() => createWebhookHandler({ secret: STORE_SECRET, store: inbox, failOpen: true })).toThrow(
      '[@payhook/core] failOpen cannot be used with a transactional store',
    );
  });
});
