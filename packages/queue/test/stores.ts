import { createHash } from 'node:crypto';
import type { DedupeStore, TransactionalStore } from '@payhook/core';
import { migrate, PostgresInbox, PostgresStore } from '@payhook/core/postgres';
import { RedisStore } from '@payhook/core/redis';
import { Redis } from 'ioredis';
import pg from 'pg';
import { DATABASE_URL, REDIS_URL } from '../../core/test/servers.ts';

/** The stores that hold claims and completions across processes: what workers need. */
export const SHARED_STORES = ['redis', 'postgres', 'inbox'] as const;
export type SharedStore = (typeof SHARED_STORES)[number];

export const STORE_TITLES: Record<SharedStore, string> = {
  redis: 'RedisStore',
  postgres: 'PostgresStore',
  inbox: 'PostgresInbox',
};

/**
 * One schema per test process for the PostgreSQL stores' tables; in the environment, so the child workers this
 * process starts use the same one.
 */
process.env.PAYHOOK_TEST_STORE_SCHEMA ??= `payhook_queue_stores_${process.pid}`;
const SCHEMA = process.env.PAYHOOK_TEST_STORE_SCHEMA;

/**
 * A store of `kind` named `name` (the same name in two processes is the same store), and `close`: what the docs'
 * `onShutdown` does with it (`redis.quit()`, `pool.end()`).
 */
export async function openStore(
  kind: SharedStore,
  name: string,
): Promise<{ store: DedupeStore | TransactionalStore; close(): Promise<void> }> {
  if (kind === 'redis') {
    const client = new Redis(REDIS_URL);
    return {
      store: new RedisStore({ client, prefix: `payhook-test:${name}:` }),
      close: async () => void (await client.quit()),
    };
  }
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  pool.on('error', () => {});
  const table = `${SCHEMA}.${kind}_${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
  await pool.query(
    `SELECT pg_advisory_xact_lock(hashtext('payhook test schema')); CREATE SCHEMA IF NOT EXISTS ${SCHEMA}`,
  );
  await migrate(pool, { table });
  const store = kind === 'inbox' ? new PostgresInbox({ pool, table }) : new PostgresStore({ pool, table });
  return { store, close: () => pool.end() };
}

/** Drops the stores' schema, once the suite is done. */
export async function dropStores(): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  } finally {
    await client.end();
  }
}
