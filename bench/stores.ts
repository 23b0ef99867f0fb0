import {
  createWebhookHandler,
  type DedupeStore,
  MemoryStore,
  type TransactionalStore,
  type WebhookHandler,
} from '@payhook/core';
import { createDeliverySource, createIdSource, formBody, SECRET } from './payload.js';
import { rotate, type Spread, spread } from './stats.js';

export interface StoreOptions {
  rounds: number;
  /** Milliseconds of claims per store per round. */
  claimMs: number;
  /** Webhooks handled one after another per store per round, for the added latency. */
  sequential: number;
  /** Claims in flight at once for the claims-per-second figure. */
  concurrency: number;
}

/** A store row: claims per second (concurrent) or added latency per webhook (sequential), over the rounds. */
export interface StoreRow extends Spread {
  name: string;
  unit: 'claims/s' | 'µs';
}

/** A store that could not be measured, and why (its server is down, or its package is missing). */
export interface SkippedStore {
  name: string;
  reason: string;
}

interface Candidate {
  name: string;
  store: DedupeStore | TransactionalStore;
  close: () => Promise<void>;
}

const TABLE = 'payhook_bench_inbox';

async function connectRedis(): Promise<Candidate> {
  const { RedisStore } = await import('@payhook/core/redis');
  const { Redis } = await import('ioredis');
  const client = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw error;
  }
  return {
    name: 'Redis',
    store: new RedisStore({ client, prefix: `payhook-bench:${process.pid}:` }),
    close: async () => {
      const keys = await client.keys(`payhook-bench:${process.pid}:*`);
      for (let i = 0; i < keys.length; i += 1000) await client.del(...keys.slice(i, i + 1000));
      client.disconnect();
    },
  };
}

async function connectPostgres(): Promise<Candidate[]> {
  const { PostgresStore, PostgresInbox, migrate } = await import('@payhook/core/postgres');
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    max: 20,
    connectionTimeoutMillis: 2_000,
  });
  try {
    await migrate(pool, { table: TABLE });
    await pool.query(`TRUNCATE ${TABLE}`);
  } catch (error) {
    await pool.end();
    throw error;
  }
  let open = 2;
  const close = async () => {
    if (--open > 0) return;
    await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await pool.end();
  };
  return [
    { name: 'PostgreSQL store', store: new PostgresStore({ pool, table: TABLE }), close },
    { name: 'PostgreSQL inbox (transactional)', store: new PostgresInbox({ pool, table: TABLE }), close },
  ];
}

/** One claim and its commit (or one empty transaction), as the handler does for a new notification. */
async function claimOnce(store: DedupeStore | TransactionalStore, key: string): Promise<void> {
  if ('transaction' in store) {
    const outcome = await store.transaction(key, async () => undefined);
    if (outcome.status !== 'done') throw new Error(`${store.name}: ${key} was a duplicate`);
    return;
  }
  const claim = await store.claim(key, 60_000);
  if (claim.status !== 'claimed') throw new Error(`${store.name}: ${key} was ${claim.status}`);
  await store.commit(key, claim.token, 3_600_000);
}

async function claimsPerSecond(candidate: Candidate, options: StoreOptions): Promise<number> {
  const nextId = createIdSource();
  const deadline = performance.now() + options.claimMs;
  let done = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      await claimOnce(candidate.store, `${nextId()}:purchase:success:1000`);
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return done / ((performance.now() - started) / 1000);
}

/** Mean wall time per webhook through the full handler, one after another. */
async function perWebhook(handler: WebhookHandler, count: number): Promise<number> {
  const next = createDeliverySource();
  const bodies = Array.from({ length: count }, () => {
    const { data, signature } = next();
    return Buffer.from(formBody(data, signature));
  });
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  const started = performance.now();
  for (const body of bodies) {
    const result = await handler({ method: 'POST', headers, body }, undefined);
    if (result.outcome !== 'handled') throw new Error(`answered ${result.outcome}: ${result.body}`);
  }
  return ((performance.now() - started) * 1000) / count;
}

function handlerWith(store: DedupeStore | TransactionalStore): WebhookHandler {
  return createWebhookHandler({ secret: SECRET, store, handle: () => undefined, logger: false });
}

/**
 * Measures each reachable store: claims per second with `concurrency` claims in flight, and the latency the store
 * adds to one webhook (the full handler with it, minus the full handler with MemoryStore, in the same round).
 * Stores whose server is down are skipped with a notice.
 */
export async function runStores(
  options: StoreOptions,
  log: (line: string) => void,
): Promise<{ rows: StoreRow[]; skipped: SkippedStore[] }> {
  const candidates: Candidate[] = [];
  const skipped: SkippedStore[] = [];
  for (const [name, connect] of [
    ['Redis', async () => [await connectRedis()]],
    ['PostgreSQL', connectPostgres],
  ] as const) {
    try {
      candidates.push(...(await connect()));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      skipped.push({ name, reason });
      log(`  ${name} skipped: ${reason}`);
    }
  }
  const rates = new Map<string, number[]>(candidates.map((c) => [c.name, []]));
  const added = new Map<string, number[]>(candidates.map((c) => [c.name, []]));
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const candidate of rotate(candidates, round)) {
        rates.get(candidate.name)!.push(await claimsPerSecond(candidate, options));
        const memory = await perWebhook(handlerWith(new MemoryStore()), options.sequential);
        const withStore = await perWebhook(handlerWith(candidate.store), options.sequential);
        added.get(candidate.name)!.push(withStore - memory);
        log(
          `  round ${round + 1}: ${candidate.name}: ${Math.round(rates.get(candidate.name)!.at(-1)!)} claims/s, +${Math.round(withStore - memory)} µs per webhook`,
        );
      }
    }
  } finally {
    for (const candidate of candidates) await candidate.close();
  }
  const rows: StoreRow[] = [];
  for (const candidate of candidates) {
    rows.push({
      name: `${candidate.name}: claims per second (${options.concurrency} in flight)`,
      unit: 'claims/s',
      ...spread(rates.get(candidate.name)!),
    });
    rows.push({
      name: `${candidate.name}: added latency per webhook`,
      unit: 'µs',
      ...spread(added.get(candidate.name)!),
    });
  }
  return { rows, skipped };
}
