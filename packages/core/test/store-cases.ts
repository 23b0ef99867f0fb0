import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { DedupeStore, TransactionalStore } from '../src/stores/contract.js';
import { MemoryStore } from '../src/stores/memory.js';
import { migrate, PostgresInbox, PostgresStore } from '../src/stores/postgres.js';
import { RedisStore } from '../src/stores/redis.js';
import { DATABASE_URL, REDIS_URL, reachPostgres, reachRedis } from './servers.js';

/** One store every exactly-once test runs against. */
export interface StoreCase {
  name: 'MemoryStore' | 'RedisStore' | 'PostgresStore' | 'PostgresStore, unbatched' | 'PostgresInbox';
  up: boolean;
  /** On vitest's fake timers: only the MemoryStore lives wholly in this process's clock. */
  fake: boolean;
  /** A transactional store rolls every handler's writes back on a failure, so all run again. */
  transactional: boolean;
  make(): DedupeStore | TransactionalStore;
}

/** The servers behind the cases, once `beforeAll` ran: a Redis client, a pool, and tables named for `name`. */
export interface StoreServers {
  readonly cases: StoreCase[];
  redis(): Redis;
  pool(): pg.Pool;
  /** The application's table beside the store's (`id text PRIMARY KEY`), for effects written in a transaction. */
  readonly appTable: string;
  readonly table: string;
}

/**
 * The four stores, on tables and key prefixes of their own (`name` and the process id, so parallel runs never meet),
 * set up in `beforeAll` and dropped in `afterAll` of the calling file.
 */
export async function storeCases(name: string): Promise<StoreServers> {
  const redisUp = await reachRedis();
  const postgresUp = await reachPostgres();
  const table = `payhook_${name}_${process.pid}`;
  const appTable = `payhook_${name}_app_${process.pid}`;
  const prefix = `payhook-test:${name}:${process.pid}:`;
  let redis: Redis | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    if (redisUp) redis = new Redis(REDIS_URL);
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
    await pool?.query(`DROP TABLE IF EXISTS ${table}, ${appTable}`);
    await pool?.end();
  });
  const cases: StoreCase[] = [
    { name: 'MemoryStore', up: true, fake: true, transactional: false, make: () => new MemoryStore() },
    {
      name: 'RedisStore',
      up: redisUp,
      fake: false,
      transactional: false,
      make: () => new RedisStore({ client: redis!, prefix }),
    },
    {
      name: 'PostgresStore',
      up: postgresUp,
      fake: false,
      transactional: false,
      make: () => new PostgresStore({ pool: pool!, table }),
    },
    {
      name: 'PostgresStore, unbatched',
      up: postgresUp,
      fake: false,
      transactional: false,
      make: () => new PostgresStore({ pool: pool!, table, batch: false }),
    },
    {
      name: 'PostgresInbox',
      up: postgresUp,
      fake: false,
      transactional: true,
      make: () => new PostgresInbox({ pool: pool!, table }),
    },
  ];
  return { cases, redis: () => redis!, pool: () => pool!, appTable, table };
}
