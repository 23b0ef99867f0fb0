import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clusterNodes,
  DATABASE_URL,
  PGBOUNCER_URL,
  REDIS_URL,
  reachPgBouncer,
  reachPostgres,
  reachRedis,
  reachRedisCluster,
} from '../../../core/test/servers.js';
import type { LedgerFact } from './fact.js';
import { migrateLedger, PostgresLedgerStore } from './postgres.js';
import { RedisLedgerStore } from './redis.js';

// What one delivery costs each shared store (issue 44's target: one more statement on PostgreSQL, one more script
// on Redis), and that an append is idempotent by the delivery's key.

const redisUp = await reachRedis();
const clusterUp = await reachRedisCluster();
const postgresUp = await reachPostgres();
const bouncerUp = postgresUp && (await reachPgBouncer());
const suffix = `${process.pid}_${Date.now() % 100_000}`;
const table = `payhook_ledgerstore_${suffix}`;
const prefix = `payhook-test:ledgerstore:${suffix}:`;
let redis: Redis | undefined;
let pool: pg.Pool | undefined;
beforeAll(async () => {
  if (redisUp) redis = new Redis(REDIS_URL);
  if (postgresUp) {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    await migrateLedger(pool, { table });
    await migrateLedger(pool, { table }); // again: nothing missing, nothing done
  }
});
afterAll(async () => {
  if (redis) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
  await pool?.query(`DROP TABLE IF EXISTS ${table}`);
  await pool?.end();
});

const fact = (k: string, s = 'success'): LedgerFact => ({
  k,
  m: 'purchase',
  s,
  d: 'p',
  a: 100,
  c: 'UAH',
  at: 1,
});

describe.skipIf(!postgresUp)('PostgresLedgerStore', () => {
  it('appends with one statement per delivery, and a key recorded before appends nothing', async () => {
    const sent: unknown[] = [];
    const counting = {
      query: (config: never, values?: never) => {
        sent.push(config);
        return pool!.query(config, values);
      },
    };
    const store = new PostgresLedgerStore({ pool: counting, table });
    const first = await store.append('o-pg', fact('k1', 'pending'));
    const second = await store.append('o-pg', fact('k2'));
    const again = await store.append('o-pg', fact('k1', 'pending'));
    expect(sent).toHaveLength(3);
    expect([first.at, second.at, again.at]).toEqual([0, 1, 0]);
    expect(again.log.map((f) => f.k)).toEqual(['k1', 'k2']);
    expect((await store.read('o-pg')).map((f) => f.s)).toEqual(['pending', 'success']);
    expect(await store.read('never')).toEqual([]);
  });

  it('names migrateLedger when its table is missing', async () => {
    const store = new PostgresLedgerStore({ pool: pool!, table: 'payhook_ledger_missing' });
    await expect(store.append('o', fact('k'))).rejects.toThrow(
      "run migrateLedger(pool, { table: 'payhook_ledger_missing' }) from @payhook/payments/postgres",
    );
  });
});

describe.skipIf(!bouncerUp)(
  'PostgresLedgerStore through PgBouncer (transaction mode, default options)',
  () => {
    it('answers every append, in and out of a transaction, once the pooler loses its named statements', async () => {
      const pooled = new pg.Pool({ connectionString: PGBOUNCER_URL, max: 8 });
      const warnings: string[] = [];
      const onWarning = (warning: Error & { code?: string }) => {
        if (warning.code === 'PAYHOOK_UNNAMED_STATEMENTS') warnings.push(warning.message);
      };
      process.on('warning', onWarning);
      try {
        const store = new PostgresLedgerStore({ pool: pooled, table });
        // Concurrent appends and reads on the pooler's connections: a name parsed on one is missing on another.
        const orders = Array.from({ length: 40 }, (_, i) => `o-pgb-${suffix}-${i}`);
        await Promise.all(orders.map((order) => store.append(order, fact(`${order}:a`, 'pending'))));
        await Promise.all(orders.map((order) => store.read(order)));
        await Promise.all(orders.map((order) => store.append(order, fact(`${order}:b`))));
        for (const order of orders)
          expect((await store.read(order)).map((f) => f.s)).toEqual(['pending', 'success']);
        // Within a transaction (as with PostgresInbox): the statement goes unnamed once names are off.
        const client = await pooled.connect();
        try {
          await client.query('BEGIN');
          await store.append(`o-pgb-${suffix}-tx`, fact('tx'), client);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
        expect((await store.read(`o-pgb-${suffix}-tx`)).map((f) => f.k)).toEqual(['tx']);
        expect(warnings.length).toBeLessThanOrEqual(1);
      } finally {
        process.off('warning', onWarning);
        await pooled.end();
      }
    });
  },
);

describe.skipIf(!redisUp)('RedisLedgerStore', () => {
  it('appends with one script per delivery, and a key recorded before appends nothing', async () => {
    let scripts = 0;
    const client = Object.assign(Object.create(redis!) as Redis, {
      evalsha: (...args: unknown[]) => {
        scripts++;
        return (redis!.evalsha as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    });
    const store = new RedisLedgerStore({ client, prefix, ttlMs: 60_000 });
    await store.append('o-warm', fact('warm')); // loads the script (NOSCRIPT, then EVAL) once
    scripts = 0;
    const first = await store.append('o-redis', fact('k1', 'pending'));
    const second = await store.append('o-redis', fact('k2'));
    const again = await store.append('o-redis', fact('k1', 'pending'));
    expect(scripts).toBe(3);
    expect([first.at, second.at, again.at]).toEqual([0, 1, 0]);
    expect(again.log.map((f) => f.k)).toEqual(['k1', 'k2']);
    expect(await redis!.pttl(`${prefix}ledger:{o-redis}:log`)).toBeGreaterThan(50_000);
    expect(await store.read('never')).toEqual([]);
  });
});

describe.skipIf(!clusterUp)('RedisLedgerStore on a Redis Cluster', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = new Cluster(clusterNodes());
    await new Promise((resolve) => cluster.once('ready', resolve));
  });
  afterAll(async () => {
    for (const node of cluster.nodes('master')) {
      for (const key of await node.keys(`${prefix}*`)) await node.del(key);
    }
    cluster.disconnect();
  });

  it('appends and reads any order id, one whose text would leave the {order_id} hash tag empty too', async () => {
    const store = new RedisLedgerStore({ client: cluster, prefix, ttlMs: 60_000 });
    for (const orderId of ['o-cluster', '}starts-with-a-brace', 'a}b{c']) {
      expect((await store.append(orderId, fact('k1', 'pending'))).at).toBe(0);
      const again = await store.append(orderId, fact('k2'));
      expect([again.at, again.log.map((f) => f.k)]).toEqual([1, ['k1', 'k2']]);
      expect((await store.read(orderId)).map((f) => f.k)).toEqual(['k1', 'k2']);
    }
  });

  it('refuses a prefix whose own {} would leave every key untagged, when built', () => {
    expect(() => new RedisLedgerStore({ client: cluster, prefix: 'app{}:' })).toThrow(
      '[@payhook/payments] RedisLedgerStore prefix must not hold an empty hash tag ("{}") on Redis Cluster: each payment\'s two keys would then be in two slots, not "app{}:".',
    );
  });
});
