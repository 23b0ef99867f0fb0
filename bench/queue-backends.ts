// The engines the queue rows run on (`queue.ts`): BullMQ on Redis and pg-boss on PostgreSQL, each with the store its
// worker records completions in, on the same server.
import type { DedupeStore } from '@payhook/core';
import { migrate, PostgresStore } from '@payhook/core/postgres';
import { RedisStore } from '@payhook/core/redis';
import type { QueueEngine } from '@payhook/queue';
import { Redis } from 'ioredis';
import pg from 'pg';
import { dropPgBossQueue } from '../test/support/pg-boss-queue.ts';
import { PGBOSS_SCHEMA } from './queue-engines.js';

/** An engine with the store its worker records completions in, on one server. */
export interface Backend {
  name: string;
  engine: 'bullmq' | 'postgres';
  /** The engine's server: the Redis URL, or the PostgreSQL connection string. */
  url: string;
  store: DedupeStore;
  open(queueName: string): Promise<QueueEngine>;
  /** Deletes the jobs a queue holds. */
  clean(queueName: string): Promise<void>;
  /** Deletes a queue the bench is done with, its jobs and whatever else the engine keeps for it. */
  drop(queueName: string): Promise<void>;
  close(): Promise<void>;
}

export const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = 'payhook_bench_queue_inbox';
/** `createPostgresQueue`'s default schema, where payhook's own rows and `examples/queue` keep their queues. */
const QUEUE_SCHEMA = 'payhook_queue';

export async function redisBackend(): Promise<Backend> {
  const { createBullMQQueue } = await import('@payhook/queue/bullmq');
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  const prefix = `payhook-bench-queue:${Date.now()}:`;
  // The queue's keys, and those of the burst's example process (its RedisStore's prefix is the queue's name).
  const clean = async (name: string) => {
    const keys = [...(await client.keys(`bull:${name}:*`)), ...(await client.keys(`${name}:*`))];
    if (keys.length > 0) await client.unlink(...keys);
  };
  return {
    name: 'BullMQ (Redis)',
    engine: 'bullmq',
    url: REDIS_URL,
    store: new RedisStore({ client, prefix }),
    open: async (name) => createBullMQQueue({ connection: REDIS_URL, name }),
    clean,
    drop: clean,
    async close() {
      // The store's claims and completions, kept for their TTL (days) on a server other runs share.
      const keys = await client.keys(`${prefix}*`);
      for (let i = 0; i < keys.length; i += 1_000) await client.unlink(...keys.slice(i, i + 1_000));
      await client.quit();
    },
  };
}

export async function postgresBackend(): Promise<Backend> {
  const { createPostgresQueue } = await import('@payhook/queue/postgres');
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 });
  await migrate(pool, { table: TABLE });
  return {
    name: 'PostgreSQL (pg-boss)',
    engine: 'postgres',
    url: DATABASE_URL,
    store: new PostgresStore({ pool, table: TABLE }),
    open: async (name) => createPostgresQueue({ connectionString: DATABASE_URL, name }),
    // Called once the latency rows queued their jobs: the engine made its schema.
    clean: async (name) => void (await pool.query(`DELETE FROM ${QUEUE_SCHEMA}.job WHERE name = $1`, [name])),
    drop: (name) => dropPgBossQueue(pool, name, QUEUE_SCHEMA),
    async close() {
      await pool.query(`DROP TABLE IF EXISTS ${TABLE}, payhook_bench_burst_inbox`);
      await pool.query(`DROP SCHEMA IF EXISTS ${PGBOSS_SCHEMA} CASCADE`);
      await pool.end();
    },
  };
}
