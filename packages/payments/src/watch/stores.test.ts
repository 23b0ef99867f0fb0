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
import type { WatchedPayment, WatchStore } from './contract.js';
import { MemoryWatchStore } from './memory.js';
import { migrateWatch, PostgresWatchStore, watchMigrationSql } from './postgres.js';
import { RedisWatchStore } from './redis.js';

const redisUp = await reachRedis();
const postgresUp = await reachPostgres();
const clusterUp = await reachRedisCluster();
const bouncerUp = postgresUp && (await reachPgBouncer());
const suffix = `${process.pid}_${Date.now() % 100_000}`;
const table = `payhook_watchstore_${suffix}`;
/** The table the store through PgBouncer uses, made by migrateWatch through the pooler too. */
const pooledTable = `payhook_watchstore_pgb_${suffix}`;
const prefix = `payhook-test:watchstore:${suffix}:`;
let redis: Redis | undefined;
let cluster: Cluster | undefined;
let pool: pg.Pool | undefined;
let pooled: pg.Pool | undefined;
beforeAll(async () => {
  if (redisUp) redis = new Redis(REDIS_URL);
  if (clusterUp) {
    cluster = new Cluster(clusterNodes());
    await new Promise((resolve) => cluster!.once('ready', resolve));
  }
  if (postgresUp) {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    await migrateWatch(pool, { table });
  }
  if (bouncerUp) {
    pooled = new pg.Pool({ connectionString: PGBOUNCER_URL, max: 8 });
    await migrateWatch(pooled, { table: pooledTable });
  }
});
afterAll(async () => {
  if (redis) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
  if (cluster) {
    for (const node of cluster.nodes('master')) {
      for (const key of await node.keys(`${prefix}*`)) await node.del(key);
    }
    cluster.disconnect();
  }
  await pooled?.end();
  await pool?.query(`DROP TABLE IF EXISTS ${table}, ${pooledTable}`);
  await pool?.end();
});

let n = 0;
const STORES = [
  { name: 'MemoryWatchStore', up: true, make: (): WatchStore => new MemoryWatchStore() },
  {
    name: 'RedisWatchStore',
    up: redisUp,
    make: (): WatchStore => new RedisWatchStore({ client: redis!, prefix: `${prefix}${n++}:` }),
  },
  {
    name: 'PostgresWatchStore',
    up: postgresUp,
    make: async (): Promise<WatchStore> => {
      await pool!.query(`DELETE FROM ${table}`);
      return new PostgresWatchStore({ pool: pool!, table });
    },
  },
  // Where a merchant's fleet puts them: the `{watch}` hash tag keeps both keys in one slot of the cluster; the
  // pooler runs each statement on any of its connections (the default options, as a merchant would leave them).
  {
    name: 'RedisWatchStore on a Redis Cluster',
    up: clusterUp,
    make: (): WatchStore => new RedisWatchStore({ client: cluster!, prefix: `${prefix}${n++}:` }),
  },
  {
    name: 'PostgresWatchStore through PgBouncer',
    up: bouncerUp,
    make: async (): Promise<WatchStore> => {
      await pool!.query(`DELETE FROM ${pooledTable}`);
      return new PostgresWatchStore({ pool: pooled!, table: pooledTable });
    },
  },
];

const T = 1_764_061_200_000;
const payment = (orderId: string, deadline: number, operation = 'purchase'): WatchedPayment => ({
  orderId,
  operation,
  createdAt: T,
  deadline,
  tries: 0,
});

describe.each(STORES)('$name', ({ up, make }) => {
  it.skipIf(!up)(
    'takes only what is due, oldest deadline first, up to the limit, each tried once more',
    async () => {
      const store = await make();
      await store.add(payment('late', T + 3_000));
      await store.add(payment('first', T + 1_000));
      await store.add(payment('second', T + 2_000));
      await store.add(payment('later', T + 9_000));
      expect(await store.take(T + 500, T + 10_000, 10)).toEqual([]);
      const taken = await store.take(T + 3_000, T + 20_000, 2);
      expect(taken.map((p) => [p.orderId, p.tries, p.deadline, p.createdAt])).toEqual([
        ['first', 1, T + 20_000, T],
        ['second', 1, T + 20_000, T],
      ]);
      expect((await store.take(T + 3_000, T + 20_000, 10)).map((p) => p.orderId)).toEqual(['late']);
      const again = await store.take(T + 20_000, T + 30_000, 10);
      expect(again.map((p) => [p.orderId, p.tries]).sort()).toEqual([
        ['first', 2],
        ['late', 2],
        ['later', 1],
        ['second', 2],
      ]);
    },
  );

  it.skipIf(!up)('takes each of 100 payments added at once exactly once, by 8 runs at once', async () => {
    const store = await make();
    const ids = Array.from({ length: 100 }, (_, i) => `many-${i}`);
    expect(await Promise.all(ids.map((id, i) => store.add(payment(id, T + i))))).toEqual(ids.map(() => true));
    const runs = await Promise.all(Array.from({ length: 8 }, () => store.take(T + 1_000, T + 50_000, 20)));
    const taken = runs.flat().map((p) => p.orderId);
    expect(taken.sort()).toEqual([...ids].sort());
    expect(await Promise.all(ids.map((id) => store.remove(id, 'purchase')))).toEqual(ids.map(() => true));
  });

  it.skipIf(!up)('hands a batch back sorted by deadline, whatever order it was written in', async () => {
    const store = await make();
    for (const [order, at] of [
      ['c', 3_000],
      ['b', 2_000],
      ['a', 1_000],
    ] as const)
      await store.add(payment(order, T + at));
    expect((await store.take(T + 5_000, T + 20_000, 10)).map((p) => p.orderId)).toEqual(['a', 'b', 'c']);
  });

  it.skipIf(!up)(
    'keeps the first registration of an order and operation; another operation is its own entry',
    async () => {
      const store = await make();
      expect(await store.add(payment('o:1', T))).toBe(true);
      expect(await store.add(payment('o:1', T + 50_000))).toBe(false);
      expect(await store.add(payment('o:1', T + 50_000, 'auth'))).toBe(true);
      expect((await store.take(T, T + 1, 10)).map((p) => [p.orderId, p.operation])).toEqual([
        ['o:1', 'purchase'],
      ]);
      expect(await store.remove('o:1', 'purchase')).toBe(true);
      expect(await store.remove('o:1', 'purchase')).toBe(false);
      expect((await store.take(T + 60_000, T + 70_000, 10)).map((p) => p.operation)).toEqual(['auth']);
    },
  );

  it.skipIf(!up)(
    'gives back one try each, taken again since or not, never below 0, keeping the deadline; a removed one is left alone',
    async () => {
      const store = await make();
      for (const [order, at] of [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ] as const)
        await store.add(payment(order, T + at));
      const [a, b, c] = await store.take(T + 3, T + 1_000, 10);
      await store.remove('c', 'purchase');
      const [a2] = await store.take(T + 1_000, T + 2_000, 10);
      // The first take's tries given back after the second take: both of a's, one of b's.
      await store.giveBack([a!, b!, c!]);
      await store.giveBack([a2!]);
      await store.giveBack([a2!]);
      await store.giveBack([]);
      expect(await store.take(T + 1_999, T + 3_000, 10)).toEqual([]);
      const again = await store.take(T + 2_000, T + 3_000, 10);
      expect(again.map((p) => [p.orderId, p.tries]).sort()).toEqual([
        ['a', 1],
        ['b', 2],
      ]);
    },
  );

  it.skipIf(!up)(
    'keeps the unreachableSince given back, answers it on the next take and clears it',
    async () => {
      const store = await make();
      await store.add(payment('a', T));
      await store.add(payment('b', T));
      const [a, b] = await store.take(T, T + 1_000, 10);
      expect([a!.unreachableSince, b!.unreachableSince]).toEqual([undefined, undefined]);
      await store.giveBack([{ ...a!, unreachableSince: T + 7 }, b!]);
      const again = await store.take(T + 1_000, T + 2_000, 10);
      expect(again.map((p) => [p.orderId, p.tries, p.unreachableSince]).sort()).toEqual([
        ['a', 1, T + 7],
        ['b', 1, undefined],
      ]);
      const third = await store.take(T + 2_000, T + 3_000, 10);
      expect(third.map((p) => p.unreachableSince)).toEqual([undefined, undefined]);
    },
  );

  it.skipIf(!up)(
    'takes by deadline, not by creation: one created later but due first comes first',
    async () => {
      const store = await make();
      await store.add({ ...payment('old', T + 2), createdAt: T - 1_000 });
      await store.add(payment('new', T + 1));
      expect((await store.take(T + 2, T + 1_000, 10)).map((p) => p.orderId)).toEqual(['new', 'old']);
    },
  );

  it.skipIf(!up)(
    'keeps the earliest unreachableSince when takes and give backs interleave (late takes landing together)',
    async () => {
      const store = await make();
      const S = T + 5;
      await store.add(payment('a', T));
      const [a] = await store.take(T, T + 1_000, 10);
      await store.giveBack([{ ...a!, unreachableSince: S }]);
      // Two takes queued while the store was offline land together: the first answers S, the second none.
      const [first] = await store.take(T + 1_000, T + 2_000, 10);
      const [second] = await store.take(T + 2_000, T + 3_000, 10);
      expect([first!.unreachableSince, second!.unreachableSince]).toEqual([S, undefined]);
      await store.giveBack([first!]);
      await store.giveBack([second!]);
      const [third] = await store.take(T + 3_000, T + 4_000, 10);
      expect([third!.tries, third!.unreachableSince]).toEqual([1, S]);
      // Two runs failing on it at once: the one that saw none gives back its own start, later than S.
      const [fourth] = await store.take(T + 4_000, T + 5_000, 10);
      await store.giveBack([third!]);
      await store.giveBack([{ ...fourth!, unreachableSince: T + 4_000 }]);
      const [fifth] = await store.take(T + 5_000, T + 6_000, 10);
      expect([fifth!.tries, fifth!.unreachableSince]).toEqual([1, S]);
    },
  );

  it.skipIf(!up)(
    'restores no old unreachableSince from a run that took before a later run reached the service',
    async () => {
      const store = await make();
      const S = T + 5;
      await store.add(payment('a', T));
      const [a] = await store.take(T, T + 1_000, 10);
      await store.giveBack([{ ...a!, unreachableSince: S }]);
      const [older] = await store.take(T + 1_000, T + 2_000, 10);
      // A later run takes it and reaches the service (it gives nothing back); then the older run gives back.
      const [later] = await store.take(T + 2_000, T + 3_000, 10);
      expect([older!.unreachableSince, later!.unreachableSince]).toEqual([S, undefined]);
      await store.giveBack([older!]);
      const [next] = await store.take(T + 3_000, T + 4_000, 10);
      expect([next!.tries, next!.unreachableSince]).toEqual([2, undefined]);
    },
  );

  it.skipIf(!up)(
    'takes past an order id with a lone surrogate (a string cut inside an emoji), and removes it',
    async () => {
      const store = await make();
      const cut = 'order-\u{1F600}'.slice(0, -1);
      await store.add(payment(cut, T));
      await store.add(payment('b', T + 1));
      const taken = await store.take(T + 1, T + 1_000, 10);
      expect(taken.map((p) => [p.orderId.startsWith('order-'), p.tries])).toEqual([
        [true, 1],
        [false, 1],
      ]);
      expect(await store.remove(cut, 'purchase')).toBe(true);
    },
  );

  it.skipIf(!up)(
    'refuses an operation that is not a word (watch.operation_invalid): its id would be another order’s',
    async () => {
      const store = await make();
      // `purchase:a` of order `b` and `purchase` of order `a:b` would share the id `purchase:a:b`.
      await expect(store.add(payment('b', T, 'purchase:a'))).rejects.toMatchObject({
        name: 'WatchError',
        code: 'watch.operation_invalid',
      });
      expect(await store.add(payment('a:b', T))).toBe(true);
      await expect(store.remove('b', 'purchase:a')).rejects.toMatchObject({
        code: 'watch.operation_invalid',
      });
      expect((await store.take(T, T + 1_000, 10)).map((p) => [p.orderId, p.operation])).toEqual([
        ['a:b', 'purchase'],
      ]);
    },
  );

  it.skipIf(!up)(
    'refuses an order id it could not keep or the service could not be asked about (watch.order_id_invalid)',
    async () => {
      const store = await make();
      for (const orderId of ['', 'o\u00001', 'o\u00851', 'x'.repeat(1_000_000), '.', '..']) {
        await expect(store.add(payment(orderId, T))).rejects.toMatchObject({
          name: 'WatchError',
          code: 'watch.order_id_invalid',
          status: 400,
        });
      }
      expect(await store.take(T, T + 1_000, 10)).toEqual([]);
    },
  );

  it.skipIf(!up)('gives each due entry to one of two runs taking at once', async () => {
    const store = await make();
    for (let i = 0; i < 20; i++) await store.add(payment(`o-${i}`, T + i));
    const [a, b] = await Promise.all([
      store.take(T + 100, T + 1_000, 20),
      store.take(T + 100, T + 1_000, 20),
    ]);
    const ids = [...a, ...b].map((p) => p.orderId).sort();
    expect(ids).toEqual([...Array(20).keys()].map((i) => `o-${i}`).sort());
  });
});

describe('migrateWatch', () => {
  it.skipIf(!postgresUp)(
    'creates the table and index once, and on a complete table takes no lock',
    async () => {
      const own = `${table}_m`;
      try {
        await migrateWatch(pool!, { table: own });
        const client = await pool!.connect();
        const held = async (run: () => Promise<void>) => {
          // Another session holds the table meanwhile.
          await client.query(`BEGIN; LOCK TABLE ${own} IN ACCESS EXCLUSIVE MODE`);
          try {
            await run();
          } finally {
            await client.query('ROLLBACK');
          }
        };
        try {
          await held(() => migrateWatch(pool!, { table: own, lockTimeoutMs: 50, attempts: 1 }));
          await pool!.query(`DROP INDEX "${own}_deadline_idx"`);
          await held(() =>
            expect(migrateWatch(pool!, { table: own, lockTimeoutMs: 50, attempts: 2 })).rejects.toThrow(
              /migrateWatch could not add the deadline index .* in 2 attempts/,
            ),
          );
          await migrateWatch(pool!, { table: own });
        } finally {
          client.release();
        }
        const index = await pool!.query('SELECT 1 FROM pg_indexes WHERE indexname = $1', [
          `${own}_deadline_idx`,
        ]);
        expect(index.rowCount).toBe(1);
      } finally {
        await pool!.query(`DROP TABLE IF EXISTS ${own}`);
      }
    },
  );

  it.skipIf(!postgresUp)('adds unreachable_since to a table made before it, keeping the rows', async () => {
    const own = `${table}_c`;
    try {
      await migrateWatch(pool!, { table: own });
      await pool!.query(`ALTER TABLE ${own} DROP COLUMN unreachable_since`);
      await pool!.query(
        `INSERT INTO ${own} (id, order_id, operation, created_at, deadline, tries) VALUES ('purchase:o', 'o', 'purchase', now(), now(), 2)`,
      );
      await migrateWatch(pool!, { table: own });
      const store = new PostgresWatchStore({ pool: pool!, table: own });
      const [taken] = await store.take(Date.now() + 1_000, Date.now() + 60_000, 10);
      expect([taken!.orderId, taken!.tries, taken!.unreachableSince]).toEqual(['o', 3, undefined]);
    } finally {
      await pool!.query(`DROP TABLE IF EXISTS ${own}`);
    }
  });

  it.skipIf(!postgresUp)(
    'names migrateWatch when the table lacks unreachable_since (code deployed before it)',
    async () => {
      const own = `${table}_old`;
      try {
        await migrateWatch(pool!, { table: own });
        await pool!.query(`ALTER TABLE ${own} DROP COLUMN unreachable_since`);
        const store = new PostgresWatchStore({ pool: pool!, table: own });
        await expect(store.take(T, T, 1)).rejects.toThrow(`run migrateWatch(pool, { table: '${own}' })`);
      } finally {
        await pool!.query(`DROP TABLE IF EXISTS ${own}`);
      }
    },
  );

  it.skipIf(!postgresUp)('names migrateWatch when the table is missing', async () => {
    const store = new PostgresWatchStore({ pool: pool!, table: `${table}_absent` });
    await expect(store.take(T, T, 1)).rejects.toThrow(
      `run migrateWatch(pool, { table: '${table}_absent' }) from @payhook/core/postgres`,
    );
  });

  it('ships SQL that is safe to run again, for a schema-qualified table too', () => {
    const sql = watchMigrationSql('billing.payhook_watch');
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "billing"."payhook_watch"');
    expect(sql).toContain(
      'CREATE INDEX IF NOT EXISTS "payhook_watch_deadline_idx" ON "billing"."payhook_watch" (deadline)',
    );
    expect(() => watchMigrationSql('bad;name')).toThrow(TypeError);
  });
});
