import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purchaseKey, signedPurchase } from './bodies.js';
import { pool, post } from './deliveries.js';
import { allHandled, type Instance, startInstances, tally } from './instances.js';
import {
  CuttableProxy,
  clusterNodes,
  DATABASE_URL,
  PGBOUNCER_URL,
  PrivateRedis,
  REDIS_URL,
  reachPgBouncer,
  reachPostgres,
  reachRedis,
  reachRedisCluster,
} from './servers.js';

const redisUp = await reachRedis();
const postgresUp = await reachPostgres();
const clusterUp = await reachRedisCluster();
const bouncerUp = postgresUp && (await reachPgBouncer());
const RUN = String(process.pid);
const HANDLED = { ok: true, outcome: 'handled' };
const DUPLICATE = { ok: true, outcome: 'duplicate' };

interface Scenario {
  name: string;
  up: boolean;
  env: Record<string, string>;
  /** Per-instance env: the Redis instances alternate ioredis and node-redis on one shared record. */
  each?: (index: number) => Record<string, string>;
  /** Inbox only: the application's own table the handler writes in the transaction. */
  appTable?: string;
  /** The Express example's env for this store (`createStoreFromEnv`); without it, `store-server.mjs` runs. */
  example?: Record<string, string>;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'Redis store',
    up: redisUp,
    env: { STORE: 'redis', REDIS_URL, PREFIX: `payhook-test:mp:${RUN}:` },
    each: (i) => ({ CLIENT: i % 2 === 0 ? 'ioredis' : 'node-redis' }),
    example: { REDIS_URL, PAYHOOK_PREFIX: `payhook-test:mp:${RUN}:`, DATABASE_URL: '' },
  },
  {
    name: 'PostgreSQL store',
    up: postgresUp,
    env: { STORE: 'postgres', DATABASE_URL, TABLE: `payhook_test_mp_${RUN}` },
    example: { DATABASE_URL, PAYHOOK_TABLE: `payhook_test_mp_${RUN}`, REDIS_URL: '' },
  },
  {
    name: 'PostgreSQL store, unbatched',
    up: postgresUp,
    env: { STORE: 'postgres', BATCH: '0', DATABASE_URL, TABLE: `payhook_test_mp_unbatched_${RUN}` },
  },
  {
    name: 'PostgreSQL inbox',
    up: postgresUp,
    env: {
      STORE: 'inbox',
      DATABASE_URL,
      TABLE: `payhook_test_mp_inbox_${RUN}`,
      APP_TABLE: `payhook_test_mp_app_${RUN}`,
    },
    appTable: `payhook_test_mp_app_${RUN}`,
  },
  // Where a merchant's fleet puts them: a Redis Cluster (the two clients alternating), PgBouncer in transaction mode
  // (with the default options for the store, prepare: false for the inbox, as docs/scaling-out.md advises).
  {
    name: 'Redis store on a Redis Cluster',
    up: clusterUp,
    env: {
      STORE: 'redis',
      REDIS_CLUSTER: clusterNodes()
        .map(({ host, port }) => `${host}:${port}`)
        .join(','),
      PREFIX: `payhook-test:mp:${RUN}:`,
    },
    each: (i) => ({ CLIENT: i % 2 === 0 ? 'ioredis' : 'node-redis' }),
  },
  {
    name: 'PostgreSQL store through PgBouncer',
    up: bouncerUp,
    env: { STORE: 'postgres', DATABASE_URL: PGBOUNCER_URL, TABLE: `payhook_test_mp_pgb_${RUN}` },
  },
  {
    name: 'PostgreSQL inbox through PgBouncer',
    up: bouncerUp,
    env: {
      STORE: 'inbox',
      PREPARE: '0',
      DATABASE_URL: PGBOUNCER_URL,
      TABLE: `payhook_test_mp_inbox_pgb_${RUN}`,
      APP_TABLE: `payhook_test_mp_app_pgb_${RUN}`,
    },
    appTable: `payhook_test_mp_app_pgb_${RUN}`,
  },
];

let db: pg.Pool | undefined;
let redis: import('ioredis').Redis | undefined;

beforeAll(async () => {
  if (postgresUp) {
    db = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    db.on('error', () => {});
    const { migrate } = await import('../src/stores/postgres.js');
    for (const scenario of SCENARIOS.filter((s) => s.env.TABLE)) {
      await db.query(`DROP TABLE IF EXISTS ${scenario.env.TABLE}`);
      await migrate(db, { table: scenario.env.TABLE });
      if (scenario.appTable) {
        await db.query(`DROP TABLE IF EXISTS ${scenario.appTable}`);
        // No unique constraint on purpose: a second run of the handler would show as a second row.
        await db.query(`CREATE TABLE ${scenario.appTable} (payment_id text NOT NULL, pid int NOT NULL)`);
      }
    }
  }
  if (redisUp) {
    const { Redis } = await import('ioredis');
    redis = new Redis(REDIS_URL);
  }
});

afterAll(async () => {
  if (db) {
    for (const scenario of SCENARIOS) {
      if (scenario.env.TABLE) await db.query(`DROP TABLE IF EXISTS ${scenario.env.TABLE}`);
      if (scenario.appTable) await db.query(`DROP TABLE IF EXISTS ${scenario.appTable}`);
    }
    await db.end();
  }
  if (redis) {
    const keys = await redis.keys(`payhook-test:mp:${RUN}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
  if (clusterUp) {
    const { Cluster } = await import('ioredis');
    const cluster = new Cluster(clusterNodes());
    await new Promise((resolve) => cluster.once('ready', resolve));
    for (const node of cluster.nodes('master')) {
      for (const key of await node.keys(`payhook-test:mp:${RUN}:*`)) await node.del(key);
    }
    cluster.disconnect();
  }
});

/** The application rows per payment_id (inbox scenarios). */
async function appRows(table: string, paymentIds: readonly string[]): Promise<Map<string, number>> {
  const result = await db!.query(`SELECT payment_id FROM ${table} WHERE payment_id = ANY($1)`, [paymentIds]);
  return tally(result.rows.map((r) => r.payment_id as string));
}

/** Redelivers like the service: again while the answer is a retryable refusal (409, 503), at most `tries` times. */
async function redeliver(url: string, body: string, tries = 100) {
  const refusals: Array<{ status: number; code: unknown }> = [];
  for (let i = 0; i < tries; i++) {
    const answer = await post(url, body);
    if (answer.status !== 409 && answer.status !== 503) return { answer, refusals };
    refusals.push({ status: answer.status, code: (answer.body.error as { code: string }).code });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`still refused after ${tries} tries: ${JSON.stringify(refusals.at(-1))}`);
}

describe.each(SCENARIOS)('$name across processes', (scenario) => {
  describe.skipIf(!scenario.up).each([2, 4])(
    `%i instances (${scenario.example ? 'the Express example' : 'store-server.mjs'})`,
    (count) => {
      let instances: Instance[];
      beforeAll(async () => {
        instances = scenario.example
          ? await startInstances(count, scenario.example, undefined, true)
          : await startInstances(count, { ...scenario.env, HANDLER_MS: '20' }, scenario.each);
      });
      afterAll(async () => {
        await Promise.all((instances ?? []).map((instance) => instance.stop()));
      });

      it('64 concurrent copies of one notification spread across them: the handler runs exactly once', async () => {
        const paymentId = randomUUID();
        const body = signedPurchase(paymentId);
        const answers = await Promise.all(
          Array.from({ length: 64 }, (_, i) => post(instances[i % count]!.url, body)),
        );
        expect(answers.map((a) => a.status)).toEqual(Array(64).fill(200));
        expect(answers.filter((a) => a.body.outcome === 'handled')).toHaveLength(1);
        expect(answers.filter((a) => a.body.outcome === 'duplicate')).toHaveLength(63);
        expect(allHandled(instances).filter((id) => id === paymentId)).toEqual([paymentId]);
        if (scenario.appTable)
          expect(await appRows(scenario.appTable, [paymentId])).toEqual(new Map([[paymentId, 1]]));
      });

      it('1,000 distinct notifications spread across them: each handled exactly once', async () => {
        const ids: string[] = Array.from({ length: 1_000 }, () => randomUUID());
        const bodies = ids.map((id) => signedPurchase(id));
        const answers = await pool(
          64,
          bodies.map((body, i) => () => post(instances[i % count]!.url, body)),
        );
        expect(answers.filter((a) => a.status !== 200 || a.body.outcome !== 'handled')).toEqual([]);
        const handled = tally(allHandled(instances).filter((id) => ids.includes(id)));
        expect(handled.size).toBe(1_000);
        expect([...handled.values()].every((n) => n === 1)).toBe(true);
        if (scenario.appTable) {
          const rows = await appRows(scenario.appTable, ids);
          expect(rows.size).toBe(1_000);
          expect([...rows.values()].every((n) => n === 1)).toBe(true);
        }
      }, 120_000);
    },
  );

  it.skipIf(!scenario.up)(
    'an instance killed (SIGKILL) inside the handler: the redelivery to another instance is handled once',
    async () => {
      const paymentId = randomUUID();
      const body = signedPurchase(paymentId);
      const [victim, survivor] = await startInstances(2, { ...scenario.env, LEASE_MS: '1500' }, (i) => ({
        ...scenario.each?.(i),
        ...(i === 0 ? { HANG_ON: paymentId } : {}),
      }));
      try {
        const lost = post(victim!.url, body).catch((error: Error) => error);
        await victim!.waitFor((e) => e.event === 'hanging' && e.payment_id === paymentId);
        if (scenario.appTable) {
          // The write happened inside the open transaction: neither it nor the inbox row is visible.
          expect(await appRows(scenario.appTable, [paymentId])).toEqual(new Map());
        }
        await victim!.stop('SIGKILL');
        expect(await lost).toBeInstanceOf(Error);

        const { answer, refusals } = await redeliver(survivor!.url, body);
        expect(answer).toEqual({ status: 200, body: HANDLED });
        // Until the lease expires a copy is in flight, never a duplicate: nothing was marked done by the victim.
        for (const refusal of refusals)
          expect(refusal).toEqual({ status: 409, code: 'notification.in_flight' });
        if (scenario.appTable) expect(refusals).toEqual([]); // the rollback frees the row: no lease to wait out
        expect(victim!.handled()).toEqual([]);
        expect(survivor!.handled()).toEqual([paymentId]);
        expect(await post(survivor!.url, body)).toEqual({ status: 200, body: DUPLICATE });
        if (scenario.appTable) {
          const rows = await db!.query(`SELECT pid FROM ${scenario.appTable} WHERE payment_id = $1`, [
            paymentId,
          ]);
          expect(rows.rows).toEqual([{ pid: survivor!.child.pid }]);
          const inbox = await db!.query(`SELECT done FROM ${scenario.env.TABLE} WHERE key = $1`, [
            purchaseKey(paymentId),
          ]);
          expect(inbox.rows).toEqual([{ done: true }]);
        }
      } finally {
        await Promise.all([victim!.stop('SIGKILL'), survivor!.stop()]);
      }
    },
    60_000,
  );
});

/** Sends `bodies` spread over `instances`; resolves the answers in order. */
function sendAll(instances: readonly Instance[], bodies: readonly string[]) {
  return Promise.all(bodies.map((body, i) => post(instances[i % instances.length]!.url, body)));
}

const STORE_DOWN = (store: string) => ({
  status: 503,
  body: {
    ok: false,
    error: {
      code: 'store.unavailable',
      message: `[@payhook/core] the duplicate store (${store}) failed; nothing was marked processed, so the service's retry is safe.`,
    },
  },
});

/**
 * 20 notifications handled, then the store goes down: those 20 and 20 new ones are all refused with 503; once it
 * is back, the first 20 are duplicates and the new 20 handled, each exactly once. Returns the 40 payment ids.
 */
async function expectNothingLostAcrossOutage(
  instances: Instance[],
  store: string,
  outage: { begin(): Promise<void> | void; end(): Promise<void> | void },
): Promise<string[]> {
  const before = Array.from({ length: 20 }, () => randomUUID());
  const during = Array.from({ length: 20 }, () => randomUUID());
  const all = [...before, ...during];
  const first = await sendAll(
    instances,
    before.map((id) => signedPurchase(id)),
  );
  expect(first.map((a) => a.body)).toEqual(Array(20).fill(HANDLED));

  await outage.begin();
  const refused = await sendAll(
    instances,
    all.map((id) => signedPurchase(id)),
  );
  expect(refused).toEqual(Array(40).fill(STORE_DOWN(store)));

  await outage.end();
  const answers = await Promise.all(
    all.map((id, i) => redeliver(instances[i % 2]!.url, signedPurchase(id)).then((r) => r.answer)),
  );
  expect(answers).toEqual([
    ...Array(20).fill({ status: 200, body: DUPLICATE }), // remembered across the outage
    ...Array(20).fill({ status: 200, body: HANDLED }),
  ]);
  const handled = tally(allHandled(instances));
  expect([...handled.keys()].sort()).toEqual([...all].sort());
  expect([...handled.values()].every((n) => n === 1)).toBe(true);
  return all;
}

describe.skipIf(!redisUp)('Redis outage across processes', () => {
  let server: PrivateRedis;
  let instances: Instance[];
  beforeAll(async () => {
    server = await PrivateRedis.start();
    instances = await startInstances(
      2,
      { STORE: 'redis', REDIS_URL: server.url, PREFIX: 'payhook-test:outage:' },
      (i) => ({ CLIENT: i === 0 ? 'ioredis' : 'node-redis' }),
    );
  });
  afterAll(async () => {
    await Promise.all((instances ?? []).map((instance) => instance.stop()));
    await server?.dispose();
  });

  it('answers 503 store.unavailable while Redis is stopped; after the restart redeliveries are handled, none lost', async () => {
    // Redis keeps its keys across the restart in its append-only file.
    await expectNothingLostAcrossOutage(instances, 'redis', {
      begin: () => server.stop(),
      end: () => server.start(),
    });
  });
});

describe.each(SCENARIOS.filter((s) => s.env.TABLE))('$name outage across processes', (scenario) => {
  let proxy: CuttableProxy;
  let instances: Instance[];
  beforeAll(async () => {
    if (!scenario.up) return;
    const target = new URL(scenario.env.DATABASE_URL!);
    proxy = await CuttableProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    target.host = `127.0.0.1:${proxy.port}`;
    instances = await startInstances(2, { ...scenario.env, DATABASE_URL: target.toString() });
  });
  afterAll(async () => {
    await Promise.all((instances ?? []).map((instance) => instance.stop()));
    await proxy?.close();
  });

  it.skipIf(!scenario.up)(
    'answers 503 store.unavailable while PostgreSQL is unreachable; after it returns nothing is lost',
    async () => {
      const all = await expectNothingLostAcrossOutage(instances, 'postgres', {
        begin: () => proxy.cut(),
        end: () => proxy.restore(),
      });
      if (scenario.appTable) {
        const rows = await appRows(scenario.appTable, all);
        expect(rows.size).toBe(40);
        expect([...rows.values()].every((n) => n === 1)).toBe(true);
      }
    },
  );
});
