import type { DedupeStore, TransactionalStore } from '@payhook/core';
import { MemoryStore } from '@payhook/core';

/** The duplicate store an example uses, its name for the logs, and how to close it on shutdown. */
export interface ExampleStore {
  store: DedupeStore | TransactionalStore;
  name: string;
  close(): Promise<void>;
}

/**
 * Chooses the examples' duplicate store from the environment: Redis when `REDIS_URL` is set, else PostgreSQL
 * when `DATABASE_URL` is set (the inbox table is created if missing), else memory. With Redis or PostgreSQL,
 * several instances of an example share one duplicate record; memory remembers only what this one handled.
 * The clients are opened once here and shared by every request.
 *
 * @example
 * const { store, close } = await createStoreFromEnv(process.env);
 */
export async function createStoreFromEnv(env: NodeJS.ProcessEnv): Promise<ExampleStore> {
  if (env.REDIS_URL) {
    const [{ Redis }, { RedisStore }] = await Promise.all([import('ioredis'), import('@payhook/core/redis')]);
    // No offline queue: while Redis is down a delivery answers 503 at once and the service retries it later.
    const client = new Redis(env.REDIS_URL, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
    });
    client.on('error', (error: Error) => console.error(`[payhook example] redis: ${error.message}`));
    await client.connect();
    return {
      store: new RedisStore({ client, prefix: env.PAYHOOK_PREFIX ?? 'payhook:' }),
      name: 'redis',
      close: async () => void (await client.quit()),
    };
  }
  if (env.DATABASE_URL) {
    const [{ default: pg }, { migrate, PostgresStore }] = await Promise.all([
      import('pg'),
      import('@payhook/core/postgres'),
    ]);
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, connectionTimeoutMillis: 2_000 });
    pool.on('error', (error: Error) => console.error(`[payhook example] postgres: ${error.message}`));
    const table = env.PAYHOOK_TABLE ?? 'payhook_inbox';
    await migrate(pool, { table });
    return { store: new PostgresStore({ pool, table }), name: 'postgres', close: () => pool.end() };
  }
  return { store: new MemoryStore(), name: 'memory', close: async () => {} };
}
