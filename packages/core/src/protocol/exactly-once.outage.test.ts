import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { signedPurchase } from '../../test/bodies.js';
import { base, deferred, formRequest, HANDLED, sleep } from '../../test/deliveries.js';
import { CuttableProxy, clusterNodes, DATABASE_URL, PGBOUNCER_URL, REDIS_URL } from '../../test/servers.js';
import { type StoreCase, type StoreServer, storeCases } from '../../test/store-cases.js';
import type { WebhookError } from '../errors.js';
import { createWebhookHandler, type WebhookHandlerOptions } from '../handler.js';
import type { DedupeStore, TransactionalStore } from '../stores/contract.js';
import { MemoryStore } from '../stores/memory.js';
import { PostgresInbox, PostgresStore } from '../stores/postgres.js';
import { RedisStore } from '../stores/redis.js';

// A store unreachable for longer than the lease while a handler runs, on two handler instances sharing it (two
// processes): the first run learns it through delivery.signal, the second runs, and the first one's late commit is
// refused (fencing) and reported once.

const servers = await storeCases('outage');

/** A handler that records each run's signal and waits for `gate` on its first run only. */
function slowFirstRun() {
  const gate = deferred();
  const signals: AbortSignal[] = [];
  const handle = async (_n: unknown, _c: unknown, delivery: { signal: AbortSignal }) => {
    signals.push(delivery.signal);
    if (signals.length === 1) await gate.promise;
  };
  return { gate, signals, handle };
}

/** The reports of one instance: codes in order, and messages. */
function reports() {
  const errors: WebhookError[] = [];
  return {
    errors,
    onError: (error: WebhookError) => void errors.push(error),
    codes: () => errors.map((e) => e.code),
  };
}

const OPTIONS = {
  leaseMs: 600,
  storeTimeoutMs: 200,
  inFlightWaitMs: 1_000,
} satisfies Partial<WebhookHandlerOptions>;

/** On a real server the machine's load counts too: a store call gets more room, and so does the lease. */
const REAL_OPTIONS = {
  leaseMs: 1_000,
  storeTimeoutMs: 500,
  inFlightWaitMs: 2_000,
} satisfies Partial<WebhookHandlerOptions>;

/**
 * Two handler instances for one notification (`body`), both running `slowFirstRun`'s handler: `first` on `far`,
 * reporting to `a`, and `second` on `near`.
 */
function twoInstances(
  far: DedupeStore | TransactionalStore,
  near: DedupeStore,
  options: Partial<WebhookHandlerOptions>,
) {
  const { gate, signals, handle } = slowFirstRun();
  const a = reports();
  const first = createWebhookHandler({ ...base(far), ...options, onError: a.onError, handle });
  const second = createWebhookHandler({ ...base(near), ...options, handle });
  return { gate, signals, a, first, second, body: signedPurchase() };
}

/** `store` as seen through a network that is down while `down()` says so: every call fails at once. */
function through(store: DedupeStore, down: () => boolean): DedupeStore {
  const unreachable = () => Promise.reject(new Error('connect ECONNREFUSED'));
  return {
    name: store.name,
    claim: (key, leaseMs) => (down() ? unreachable() : store.claim(key, leaseMs)),
    renew: (key, token, leaseMs) => (down() ? unreachable() : store.renew(key, token, leaseMs)),
    commit: (key, token, ttlMs) => (down() ? unreachable() : store.commit(key, token, ttlMs)),
    release: (key, token) => (down() ? unreachable() : store.release(key, token)),
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a store unreachable past the lease, on fake timers (MemoryStore shared by two instances)', () => {
  it('aborts the first run’s signal, lets the second instance run, and reports the refused stale commit once', async () => {
    vi.useFakeTimers();
    const memory = new MemoryStore();
    let down = false;
    const { gate, signals, a, first, second, body } = twoInstances(
      through(memory, () => down),
      memory,
      OPTIONS,
    );

    const answer = first(formRequest(body), undefined);
    await vi.advanceTimersByTimeAsync(0);
    expect(signals).toHaveLength(1);
    down = true;
    await vi.advanceTimersByTimeAsync(500);
    expect(signals[0]!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1_500); // the lease ran out 600 ms after the last renewal, two more passed
    expect(signals[0]!.aborted).toBe(true);
    expect((signals[0]!.reason as WebhookError).code).toBe('claim.lost');

    expect((await second(formRequest(body), undefined)).body).toBe(HANDLED);
    down = false;
    gate.resolve();
    expect((await answer).body).toBe(HANDLED);
    expect(signals).toHaveLength(2);
    expect(a.codes()).toEqual(['store.unavailable', 'claim.lost', 'claim.lost']);
    expect(a.errors[0]!.message).toBe(
      '[@payhook/core] the duplicate store (memory) failed when renewing the claim of a running handler; the run goes on, and if the store stays unreachable past leaseMs another copy may run the handlers too.',
    );
    expect(a.errors[1]!.message).toMatch(
      /^\[@payhook\/core\] a claim expired while its handler was still running \(fence \d+\) \(the store was unreachable for longer than leaseMs, or another copy claimed it\): delivery\.signal is aborted, and another copy may run the handlers too\.$/,
    );
    expect(a.errors[2]!.message).toMatch(
      /^\[@payhook\/core\] the run \(fence \d+\) lost the notification to a later claim: the store refused its commit \(fencing\), so only the run holding the claim records it\.$/,
    );
  });

  it('starts no further handler once the lease is lost, and answers 503 claim.lost so the service retries', async () => {
    vi.useFakeTimers();
    const memory = new MemoryStore();
    let down = false;
    const gate = deferred();
    const ran: string[] = [];
    const webhook = createWebhookHandler({ ...base(through(memory, () => down)), ...OPTIONS })
      .on('purchase', async function fulfil() {
        ran.push('fulfil');
        await gate.promise;
      })
      .onAny(function audit() {
        ran.push('audit');
      });
    const answer = webhook(formRequest(signedPurchase()), undefined);
    await vi.advanceTimersByTimeAsync(0);
    down = true;
    await vi.advanceTimersByTimeAsync(2_000);
    down = false;
    gate.resolve();
    const result = await answer;
    expect(result.status).toBe(503);
    expect(JSON.parse(result.body).error.code).toBe('claim.lost');
    expect(ran).toEqual(['fulfil']);
  });

  it('aborts the signal of a run whose transaction the store says is lost (onLost), and reports it once', async () => {
    vi.useFakeTimers();
    const a = reports();
    const { gate, signals, handle } = slowFirstRun();
    const inbox: TransactionalStore = {
      name: 'fake-inbox',
      async transaction(_key, work, options) {
        const running = work(undefined);
        options?.onLost?.(new Error('Connection terminated unexpectedly'));
        options?.onLost?.(new Error('Connection terminated unexpectedly'));
        await running;
        throw new Error('Client was closed and is not queryable');
      },
    };
    const webhook = createWebhookHandler({ ...base(inbox), ...OPTIONS, onError: a.onError, handle });
    const answer = webhook(formRequest(signedPurchase()), undefined);
    await vi.advanceTimersByTimeAsync(0);
    expect(signals[0]!.aborted).toBe(true);
    gate.resolve();
    const result = await answer;
    expect(result.status).toBe(503);
    expect(JSON.parse(result.body).error.code).toBe('store.unavailable');
    expect(a.codes()).toEqual(['claim.lost', 'store.unavailable']);
  });
});

/**
 * The real stores, each reached by the first instance through proxies that the test cuts: one in front of Redis,
 * PostgreSQL or PgBouncer, one in front of each node of the Redis Cluster (the client maps the addresses the cluster
 * announces to them).
 */
const REAL = servers.cases.filter((c) => !c.fake);
const proxies = new Map<StoreServer, CuttableProxy[]>();
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  const hostPort = (url: string, port: number) => ({
    host: new URL(url).hostname,
    port: Number(new URL(url).port || port),
  });
  proxies.set('redis', [await CuttableProxy.start(hostPort(REDIS_URL, 6379))]);
  proxies.set('postgres', [await CuttableProxy.start(hostPort(DATABASE_URL, 5432))]);
  proxies.set('pgbouncer', [await CuttableProxy.start(hostPort(PGBOUNCER_URL, 6432))]);
  proxies.set('redis cluster', await Promise.all(clusterNodes().map((node) => CuttableProxy.start(node))));
});

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
  for (const list of proxies.values()) for (const proxy of list) await proxy.close();
});

/** A second connection to `storeCase`'s server through its proxies; `ready` resolves once it answers again. */
function viaProxy(storeCase: StoreCase): { store: DedupeStore | TransactionalStore; ready(): Promise<void> } {
  const [proxy] = proxies.get(storeCase.server)!;
  const prefix = `payhook-test:outage:${process.pid}:`;
  if (storeCase.server === 'redis') {
    // The same server and database (REDIS_URL's /N) as the near instance, through the proxy.
    const url = new URL(REDIS_URL);
    url.host = `127.0.0.1:${proxy!.port}`;
    const client = new Redis(url.toString(), { retryStrategy: () => 20 });
    client.on('error', () => {});
    closers.push(async () => client.disconnect());
    return { store: new RedisStore({ client, prefix }), ready: () => until(() => client.status === 'ready') };
  }
  if (storeCase.server === 'redis cluster') {
    const nodes = clusterNodes();
    const natMap = Object.fromEntries(
      proxies
        .get('redis cluster')!
        .map((p, i) => [`${nodes[i]!.host}:${nodes[i]!.port}`, { host: '127.0.0.1', port: p.port }]),
    );
    const startup = proxies.get('redis cluster')!.map((p) => ({ host: '127.0.0.1', port: p.port }));
    const client = new Cluster(startup, { natMap, clusterRetryStrategy: () => 20 });
    client.on('error', () => {});
    closers.push(async () => client.disconnect());
    return { store: new RedisStore({ client, prefix }), ready: () => until(() => client.status === 'ready') };
  }
  const url = new URL(storeCase.server === 'pgbouncer' ? PGBOUNCER_URL : DATABASE_URL);
  url.host = `127.0.0.1:${proxy!.port}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  pool.on('error', () => {});
  closers.push(() => pool.end());
  const store = storeCase.transactional
    ? new PostgresInbox({ pool, table: servers.table })
    : new PostgresStore({ pool, table: servers.table });
  return {
    store,
    ready: async () => {
      for (let i = 0; i < 100; i++) {
        if (
          await pool.query('SELECT 1').then(
            () => true,
            () => false,
          )
        )
          return;
        await sleep(20);
      }
    },
  };
}

/** Cuts (or restores, stalls, resumes) every proxy in front of `storeCase`'s server. */
function network(storeCase: StoreCase) {
  const each = (act: (proxy: CuttableProxy) => void) => () => {
    for (const proxy of proxies.get(storeCase.server)!) act(proxy);
  };
  return {
    cut: each((p) => p.cut()),
    restore: each((p) => p.restore()),
    stall: each((p) => p.stall()),
    resume: each((p) => p.resume()),
  };
}

async function until(condition: () => boolean): Promise<void> {
  await vi.waitFor(() => expect(condition()).toBe(true), { timeout: 6_000, interval: 20 });
}

/** Whether the store counts claims (fencing); a store without it cannot refuse a stale commit. */
async function fences(store: DedupeStore): Promise<boolean> {
  const claim = await store.claim(`probe-${randomUUID()}`, 1_000);
  return claim.status === 'claimed' && claim.fence !== undefined;
}

describe.each(REAL.filter((c) => !c.transactional))(
  'two instances on one $name, the first cut off past the lease',
  (storeCase) => {
    it.skipIf(!storeCase.up)(
      'aborts the first run’s signal, lets the second instance run, and reports the refused stale commit once',
      async () => {
        const proxy = network(storeCase);
        const far = viaProxy(storeCase);
        const near = storeCase.make() as DedupeStore;
        const { gate, signals, a, first, second, body } = twoInstances(far.store, near, REAL_OPTIONS);

        const answer = first(formRequest(body), undefined);
        await until(() => signals.length === 1);
        proxy.cut();
        await until(() => signals[0]!.aborted);
        expect((await second(formRequest(body), undefined)).body).toBe(HANDLED);
        proxy.restore();
        await far.ready();
        gate.resolve();
        expect((await answer).body).toBe(HANDLED);
        expect(signals).toHaveLength(2);
        // Failed renewals are reported once per run, however many ticks failed (under load the loss may be seen first).
        const renewals = a.errors.filter((e) => e.message.includes('when renewing the claim'));
        expect(renewals.length).toBeLessThanOrEqual(1);
        // The expiry once; then, where the store fences, the refused commit once.
        const lost = a.errors.filter((e) => e.code === 'claim.lost').map((e) => e.message);
        expect(lost[0]).toContain('a claim expired while its handler was still running');
        if (await fences(near)) {
          expect(lost).toHaveLength(2);
          expect(lost[1]).toContain('lost the notification to a later claim');
        } else {
          expect(lost).toHaveLength(1);
        }
      },
    );
  },
);

describe.each(REAL.filter((c) => c.transactional))('two instances on one $name', (inbox) => {
  const inboxCase = () => inbox;
  const proxy = network(inbox);
  const rows = async (id: string) =>
    (
      await servers
        .pool()
        .query(`SELECT id FROM ${servers.appTable} WHERE id LIKE $1 ORDER BY id`, [`${id}:%`])
    ).rows.map((r: { id: string }) => r.id);

  it.skipIf(!inbox.up)(
    'commits one effect when the first instance is cut off mid-handler and the second runs the notification',
    async () => {
      const far = viaProxy(inboxCase());
      const near = inboxCase().make() as PostgresInbox<pg.PoolClient>;
      const inboxes = [far.store as PostgresInbox<pg.PoolClient>, near];
      const gate = deferred();
      const paymentId = randomUUID();
      let started = 0;
      const signals: AbortSignal[] = [];
      const instance = (index: number) =>
        createWebhookHandler({ ...base(inboxes[index]!), ...REAL_OPTIONS }).on(
          'purchase',
          async (_n, _c, delivery) => {
            await inboxes[index]!.client(delivery).query(`INSERT INTO ${servers.appTable} (id) VALUES ($1)`, [
              `${paymentId}:${index === 0 ? 'first' : 'second'}`,
            ]);
            signals.push(delivery.signal);
            started++; // its row written, not yet committed
            if (index === 0) await gate.promise;
          },
        );
      const [first, second] = [instance(0), instance(1)];
      const body = signedPurchase(paymentId);

      const answer = first(formRequest(body), undefined);
      await until(() => started === 1);
      proxy.cut();
      // The first run hears that its transaction is gone (its connection died) while its handler still waits.
      await until(() => signals[0]!.aborted);
      expect((signals[0]!.reason as WebhookError).code).toBe('claim.lost');
      expect((await second(formRequest(body), undefined)).body).toBe(HANDLED);
      expect(signals[1]!.aborted).toBe(false);
      proxy.restore();
      gate.resolve();
      const result = await answer;
      expect(result.status).toBe(503);
      expect(JSON.parse(result.body).error.code).toBe('store.unavailable');
      expect(await rows(paymentId)).toEqual([`${paymentId}:second`]);
    },
  );

  it.skipIf(!inbox.up)(
    'answers 503 store.unavailable within storeTimeoutMs when the COMMIT stalls, and the retry is a duplicate once it lands',
    async () => {
      const far = viaProxy(inboxCase());
      const inbox = far.store as PostgresInbox<pg.PoolClient>;
      const paymentId = randomUUID();
      let runs = 0;
      const webhook = createWebhookHandler({
        ...base(inbox),
        ...REAL_OPTIONS,
        handlerTimeoutMs: 5_000,
      }).on('purchase', async (_n, _c, delivery) => {
        runs++;
        await inbox
          .client(delivery)
          .query(`INSERT INTO ${servers.appTable} (id) VALUES ($1)`, [`${paymentId}:row`]);
        // The database freezes as the handler returns: the COMMIT goes out and no answer comes back.
        proxy.stall();
      });
      const body = signedPurchase(paymentId);
      const frozen = await webhook(formRequest(body), undefined);
      expect(frozen.status).toBe(503);
      expect(JSON.parse(frozen.body).error).toEqual({
        code: 'store.unavailable',
        message:
          '[@payhook/core] the duplicate store (postgres) did not answer within 500 ms (storeTimeoutMs) when committing the transaction after the handlers finished; if the commit landed the retry is answered duplicate, if not the handlers run again.',
      });
      proxy.resume();
      const retry = await webhook(formRequest(body), undefined);
      expect(retry.body).toBe('{"ok":true,"outcome":"duplicate"}');
      expect(runs).toBe(1);
      expect(await rows(paymentId)).toEqual([`${paymentId}:row`]);
    },
  );
});
