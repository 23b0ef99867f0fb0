import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { DedupeStore, TransactionalStore } from '../src/stores/contract.js';
import { MemoryStore } from '../src/stores/memory.js';
import { migrate, PostgresInbox, PostgresStore } from '../src/stores/postgres.js';
import { RedisStore } from '../src/stores/redis.js';
import {
  clusterNodes,
  DATABASE_URL,
  PGBOUNCER_URL,
  REDIS_URL,
  reachPgBouncer,
  reachPostgres,
  reachRedis,
  reachRedisCluster,
} from './servers.js';

/** Where a case's store keeps its data: in the process, one Redis, a Redis Cluster, PostgreSQL or PgBouncer in front of it. */
export type StoreServer = 'memory' | 'redis' | 'redis cluster' | 'postgres' | 'pgbouncer';

/** One store every exactly-once test runs against. */
export interface StoreCase {
  name:
    | 'MemoryStore'
    | 'RedisStore'
    | 'PostgresStore'
    | 'PostgresStore, unbatched'
    | 'PostgresInbox'
    | 'RedisStore on a Redis Cluster'
    | 'PostgresStore through PgBouncer'
    | 'PostgresStore, unbatched, through PgBouncer'
    | 'PostgresInbox through PgBouncer';
  server: StoreServer;
  up: boolean;
  /** On vitest's fake timers: only the MemoryStore lives wholly in this process's clock. */
  fake: boolean;
  /** A transactional store rolls every handler's writes back on a failure, so all run again. */
  transactional: boolean;
  make(): DedupeStore | TransactionalStore;
}

/**
 * The servers behind the cases, once `beforeAll` ran: a Redis client, a cluster client, a pool straight to PostgreSQL
 * and one through PgBouncer, and tables named for `name`.
 */
export interface StoreServers {
  readonly cases: StoreCase[];
  redis(): Redis;
  cluster(): Cluster;
  pool(): pg.Pool;
  pooled(): pg.Pool;
  /** The application's table beside the store's (`id text PRIMARY KEY`), for effects written in a transaction. */
  readonly appTable: string;
  readonly table: string;
}

/**
 * The stores, on tables and key prefixes of their own (`name` and the process id, so parallel runs never meet), set
 * up in `beforeAll` and dropped in `afterAll` of the calling file: each real one on its server, then again where a
 * merchant's fleet puts it, RedisStore on a Redis Cluster and the PostgreSQL stores through PgBouncer in transaction
 * mode (the same table, reached through the pooler).
 */
export async function storeCases(name: string): Promise<StoreServers> {
  const redisUp = await reachRedis();
  const postgresUp = await reachPostgres();
  const clusterUp = await reachRedisCluster();
  const bouncerUp = postgresUp && (await reachPgBouncer());
  const table = `payhook_${name}_${process.pid}`;
  const appTable = `payhook_${name}_app_${process.pid}`;
  const prefix = `payhook-test:${name}:${process.pid}:`;
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
    if (bouncerUp) pooled = new pg.Pool({ connectionString: PGBOUNCER_URL, max: 20 });
    if (postgresUp) {
      pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 });
      await pool.query(`DROP TABLE IF EXISTS ${table}, ${appTable}`);
      await migrate(pool, { table });
      await pool.query(`CREATE TABLE ${appTable} (id text PRIMARY KEY)`);
    }
  });
  afterAll(async () => {
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
    if (cluster) {
      for (const master of cluster.nodes('master')) {
        const keys = await master.keys(`${prefix}*`);
        for (const key of keys) await master.del(key);
      }
      cluster.disconnect();
    }
    await pooled?.end();
    await pool?.query(`DROP TABLE IF EXISTS ${table}, ${appTable}`);
    await pool?.end();
  });
  const cases: StoreCase[] = [
    {
      name: 'MemoryStore',
      server: 'memory',
      up: true,
      fake: true,
      transactional: false,
      make: () => new MemoryStore(),
    },
    {
      name: 'RedisStore',
      server: 'redis',
      up: redisUp,
      fake: false,
      transactional: false,
      make: () => new RedisStore({ client: redis!, prefix }),
    },
    {
      name: 'PostgresStore',
      server: 'postgres',
      up: postgresUp,
      fake: false,
      transactional: false,
      make: () => new PostgresStore({ pool: pool!, table }),
    },
    {
      name: 'PostgresStore, unbatched',
      server: 'postgres',
      up: postgresUp,
      fake: false,
      transactional: false,
      make: () => new PostgresStore({ pool: pool!, table, batch: false }),
    },
    {
      name: 'PostgresInbox',
      server: 'postgres',
      up: postgresUp,
      fake: false,
      transactional: true,
      make: () => new PostgresInbox({ pool: pool!, table }),
    },
    {
      name: 'RedisStore on a Redis Cluster',
      server: 'redis cluster',
      up: clusterUp,
      fake: false,
      transactional: false,
      make: () => new RedisStore({ client: cluster!, prefix }),
    },
    // The default options, as a merchant who puts PgBouncer in front of the database without reading about it.
    {
      name: 'PostgresStore through PgBouncer',
      server: 'pgbouncer',
      up: bouncerUp,
      fake: false,
      transactional: false,
      make: () => new PostgresStore({ pool: pooled!, table }),
    },
    {
      name: 'PostgresStore, unbatched, through PgBouncer',
      server: 'pgbouncer',
      up: bouncerUp,
      fake: false,
      transactional: false,
      make: () => new PostgresStore({ pool: pooled!, table, batch: false }),
    },
    {
      name: 'PostgresInbox through PgBouncer',
      server: 'pgbouncer',
      up: bouncerUp,
      fake: false,
      transactional: true,
      make: () => new PostgresInbox({ pool: pooled!, table }),
    },
  ];
  return {
    cases,
    redis: () => redis!,
    cluster: () => cluster!,
    pool: () => pool!,
    pooled: () => pooled!,
    appTable,
    table,
  };
}
