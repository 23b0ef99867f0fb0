// For `pnpm bench`: one row per durable store. Opens each reachable store ONCE (a shared client or pool, as under
// autocannon load: no connection per request) and measures a webhook's whole store lifecycle on loopback.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { DedupeStore, TransactionalStore } from '../src/dedupe.js';
import { migrate, PostgresInbox, PostgresStore } from '../src/stores/postgres.js';
import { RedisStore } from '../src/stores/redis.js';
import { DATABASE_URL, pingRedis, REDIS_URL } from './servers.js';

/** A store opened for the benchmark, and how to drop its keys or table and close its client. */
export interface BenchStore {
  name: 'redis' | 'postgres' | 'postgres inbox';
  store: DedupeStore | TransactionalStore;
  close(): Promise<void>;
}

export interface StoreBenchResult {
  name: string;
  operations: number;
  /** Whole claim → commit lifecycles (or inbox transactions) per second, `concurrency` at a time. */
  perSecond: number;
  /** What the store adds to one webhook, in milliseconds. */
  meanMs: number;
  p99Ms: number;
}

/**
 * Opens every store whose server answers (REDIS_URL, DATABASE_URL or the local defaults), each under a private
 * key prefix or table; a server that does not answer is left out with a warning.
 *
 * @example
 * for (const s of await openBenchStores()) { rows.push(await measureStore(s)); await s.close(); }
 */
export async function openBenchStores(): Promise<BenchStore[]> {
  const stores: BenchStore[] = [];
  const tag = `${process.pid}_${Date.now()}`;
  try {
    await pingRedis(REDIS_URL);
    const client = new Redis(REDIS_URL, { enableOfflineQueue: true });
    const prefix = `payhook-bench:${tag}:`;
    stores.push({
      name: 'redis',
      store: new RedisStore({ client, prefix }),
      close: async () => {
        const keys = await client.keys(`${prefix}*`);
        for (let i = 0; i < keys.length; i += 1_000) await client.del(...keys.slice(i, i + 1_000));
        client.disconnect();
      },
    });
  } catch (error) {
    console.warn(`store bench: Redis skipped (${(error as Error).message})`);
  }
  try {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 16, connectionTimeoutMillis: 2_000 });
    pool.on('error', () => {});
    const table = `payhook_bench_${tag}`;
    await migrate(pool, { table });
    let open = 2;
    const close = async () => {
      if (--open > 0) return;
      await pool.query(`DROP TABLE IF EXISTS ${table}`);
      await pool.end();
    };
    stores.push({ name: 'postgres', store: new PostgresStore({ pool, table }), close });
    stores.push({ name: 'postgres inbox', store: new PostgresInbox({ pool, table }), close });
  } catch (error) {
    console.warn(`store bench: PostgreSQL skipped (${(error as Error).message})`);
  }
  return stores;
}

/**
 * Runs `operations` distinct notifications' store lifecycles (claim then commit, or one inbox transaction),
 * `concurrency` at a time, and reports the rate and the latency each adds to a webhook.
 *
 * @example
 * await measureStore(store, { operations: 5_000, concurrency: 32 }); // { perSecond: 9000, meanMs: 3.4, … }
 */
export async function measureStore(
  { name, store }: BenchStore,
  options?: { operations?: number; concurrency?: number },
): Promise<StoreBenchResult> {
  const operations = options?.operations ?? 5_000;
  const concurrency = options?.concurrency ?? 32;
  const once = async (key: string) => {
    if ('transaction' in store) {
      await store.transaction(key, async () => undefined);
      return;
    }
    const claim = await store.claim(key, 60_000);
    if (claim.status !== 'claimed') throw new Error(`store bench: ${name} did not claim a new key`);
    await store.commit(key, claim.token, 3_600_000);
  };
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < operations) {
        const t0 = performance.now();
        await once(randomUUID());
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    name,
    operations,
    perSecond: Math.round(operations / seconds),
    meanMs: latencies.reduce((sum, ms) => sum + ms, 0) / latencies.length,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0,
  };
}
