import type { DedupeStore } from '@payhook/core';
import type { QueueEngine } from '@payhook/queue';

/** The queue engine an example process uses, the store its worker records completions in, and how to close both. */
export interface QueueBackend {
  name: 'bullmq' | 'postgres';
  queue: QueueEngine;
  store: DedupeStore;
  close(): Promise<void>;
}

const LOCAL_REDIS = 'redis://127.0.0.1:6379';
const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Opens the queue from the environment: BullMQ on `REDIS_URL` (default the local Redis), or the PostgreSQL engine
 * when `QUEUE=postgres` (on `DATABASE_URL`, default the local `test` database). The handlers' completions go to the
 * same server, so every web process and worker shares them.
 *
 * @example
 * const { queue, store, close } = await openQueueBackend(process.env);
 */
export async function openQueueBackend(env: NodeJS.ProcessEnv): Promise<QueueBackend> {
  const engine = env.QUEUE || 'bullmq';
  if (engine === 'postgres') return openPostgres(env.DATABASE_URL || LOCAL_POSTGRES, env);
  if (engine === 'bullmq') return openBullMQ(env.REDIS_URL || LOCAL_REDIS, env);
  throw new Error(`QUEUE must be bullmq (the default) or postgres, not ${JSON.stringify(engine)}`);
}

async function openBullMQ(url: string, env: NodeJS.ProcessEnv): Promise<QueueBackend> {
  const [{ Redis }, { RedisStore }, { createBullMQQueue }] = await Promise.all([
    import('ioredis'),
    import('@payhook/core/redis'),
    import('@payhook/queue/bullmq'),
  ]);
  const client = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  client.on('error', (error: Error) => console.error(`[payhook example] redis: ${error.message}`));
  await client.connect();
  const queue = await createBullMQQueue({ connection: url, name: queueName(env) });
  const close = async () => {
    await queue.close();
    await client.quit();
  };
  const store = new RedisStore({ client, prefix: env.PAYHOOK_PREFIX ?? 'payhook:' });
  return { name: 'bullmq', queue, store, close };
}

async function openPostgres(url: string, env: NodeJS.ProcessEnv): Promise<QueueBackend> {
  const [{ default: pg }, { migrate, PostgresStore }, { createPostgresQueue }] = await Promise.all([
    import('pg'),
    import('@payhook/core/postgres'),
    import('@payhook/queue/postgres'),
  ]);
  const pool = new pg.Pool({ connectionString: url, connectionTimeoutMillis: 2_000 });
  pool.on('error', (error: Error) => console.error(`[payhook example] postgres: ${error.message}`));
  const table = env.PAYHOOK_TABLE ?? 'payhook_inbox';
  await migrate(pool, { table });
  const queue = await createPostgresQueue({ connectionString: url, name: queueName(env) });
  const close = async () => {
    await queue.close();
    await pool.end();
  };
  return { name: 'postgres', queue, store: new PostgresStore({ pool, table }), close };
}

/** `PAYHOOK_QUEUE`: the queue's name, default `payhook-notifications` (the engines' default). */
function queueName(env: NodeJS.ProcessEnv): string {
  return env.PAYHOOK_QUEUE || 'payhook-notifications';
}

/** `WORK_MS`: how long each notification's work takes, default 0. */
export function workMsFrom(env: NodeJS.ProcessEnv): number {
  const workMs = Number(env.WORK_MS ?? 0);
  if (!Number.isFinite(workMs) || workMs < 0) {
    throw new Error(`WORK_MS must be a number of milliseconds, not ${JSON.stringify(env.WORK_MS)}`);
  }
  return workMs;
}
