import { setTimeout as sleep } from 'node:timers/promises';
import {
  createWebhookHandler,
  type DedupeStore,
  type NotificationQueue,
  type WebhookHandler,
} from '@payhook/core';
import { migrate, PostgresStore } from '@payhook/core/postgres';
import { RedisStore } from '@payhook/core/redis';
import { createWorker, type QueueEngine } from '@payhook/queue';
import { Redis } from 'ioredis';
import pg from 'pg';
import { percentiles } from './limits.js';
import { createDeliverySource, formBody, SECRET } from './payload.js';
import { rotate, type Spread, spread } from './stats.js';

export interface QueueBenchOptions {
  rounds: number;
  /** Webhooks answered per row per round, at each of `inFlight` at a time. */
  requests: number;
  inFlight: readonly number[];
  /** How long the application's handler takes (its work: a courier call, an email). */
  workMs: number;
  /** Jobs queued, then run through one worker, per engine per round. */
  jobs: number;
  /** The worker's concurrency for the jobs-per-second rows. */
  concurrency: number;
}

/** A queue row: a webhook's answer latency (p50 and p99, ms, medians over the rounds), or jobs per second. */
export interface QueueRow extends Spread {
  name: string;
  unit: 'ms' | 'jobs/s';
  p99?: Spread;
}

/** An engine with the store its worker records completions in, on one server. */
interface Backend {
  name: string;
  store: DedupeStore;
  open(queueName: string): Promise<QueueEngine>;
  /** Deletes what a round's queue left on the server. */
  clean(queueName: string): Promise<void>;
  close(): Promise<void>;
}

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = 'payhook_bench_queue_inbox';

async function redisBackend(): Promise<Backend> {
  const { createBullMQQueue } = await import('@payhook/queue/bullmq');
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  return {
    name: 'BullMQ (Redis)',
    store: new RedisStore({ client, prefix: `payhook-bench-queue:${Date.now()}:` }),
    open: async (name) => createBullMQQueue({ connection: REDIS_URL, name }),
    async clean(name) {
      const keys = await client.keys(`bull:${name}:*`);
      if (keys.length > 0) await client.unlink(...keys);
    },
    close: async () => void (await client.quit()),
  };
}

async function postgresBackend(): Promise<Backend> {
  const { createPostgresQueue } = await import('@payhook/queue/postgres');
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 });
  await migrate(pool, { table: TABLE });
  return {
    name: 'PostgreSQL (pg-boss)',
    store: new PostgresStore({ pool, table: TABLE }),
    open: async (name) => createPostgresQueue({ connectionString: DATABASE_URL, name }),
    clean: async () => {},
    async close() {
      await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
      await pool.end();
    },
  };
}

/** The webhook a row answers with: the store, the queue when given, and a handler that works `workMs`. */
function webhookWith(store: DedupeStore, queue: NotificationQueue | undefined, workMs: number) {
  return createWebhookHandler({ secret: SECRET, store, queue, logger: false }).onAny(async () => {
    if (workMs > 0) await sleep(workMs);
  });
}

/** Answers `requests` fresh deliveries, `inFlight` at a time; each answer's latency in ms. */
async function answerLatencies(
  webhook: WebhookHandler,
  requests: number,
  inFlight: number,
): Promise<number[]> {
  const next = createDeliverySource();
  const latencies: number[] = [];
  let sent = 0;
  const lane = async () => {
    while (sent++ < requests) {
      const { data, signature } = next();
      const body = formBody(data, signature);
      const started = performance.now();
      const result = await webhook(
        { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
        undefined,
      );
      if (result.status !== 200) throw new Error(`the bench webhook answered ${result.status}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return latencies;
}

/** Queues `jobs` notifications, then runs them through one worker: jobs per second from its start to the last. */
async function jobsPerSecond(
  backend: Backend,
  queue: QueueEngine,
  options: QueueBenchOptions,
): Promise<number> {
  let done = 0;
  let finished: () => void = () => {};
  const all = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const webhook = createWebhookHandler({ secret: SECRET, store: backend.store, queue, logger: false }).onAny(
    () => {
      if (++done === options.jobs) finished();
    },
  );
  await answerLatencies(webhook, options.jobs, 20);
  const started = performance.now();
  const worker = await createWorker(webhook, queue, {
    concurrency: options.concurrency,
    stopOnSignals: false,
  });
  await all;
  const seconds = (performance.now() - started) / 1000;
  await worker.stop();
  return options.jobs / seconds;
}

/**
 * The queue rows: per engine, the answer latency of a webhook whose handler works `workMs`, handled inline with the
 * engine's own store vs queued, and jobs per second through one worker. Engines whose server is down are skipped.
 */
export async function runQueue(
  options: QueueBenchOptions,
  log: (line: string) => void,
): Promise<{ rows: QueueRow[]; skipped: { name: string; reason: string }[] }> {
  const backends: Backend[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const [name, open] of [
    ['BullMQ (Redis)', redisBackend],
    ['PostgreSQL (pg-boss)', postgresBackend],
  ] as const) {
    try {
      backends.push(await open());
    } catch (error) {
      skipped.push({ name, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  const p50 = new Map<string, number[]>();
  const p99 = new Map<string, number[]>();
  const rates = new Map<string, number[]>();
  const push = (map: Map<string, number[]>, key: string, value: number) =>
    map.set(key, [...(map.get(key) ?? []), value]);
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const backend of rotate(backends, round)) {
        const queueName = `payhook-bench-${Date.now()}-${round}`;
        const queue = await backend.open(queueName);
        try {
          for (const inFlight of options.inFlight) {
            for (const [way, webhook] of [
              ['handled inline', webhookWith(backend.store, undefined, options.workMs)],
              ['queued', webhookWith(backend.store, queue, options.workMs)],
            ] as const) {
              const row = `${backend.name}, ${inFlight} in flight: ${way}`;
              await answerLatencies(webhook, inFlight * 5, inFlight); // warm-up: connections, scripts
              const latency = percentiles(await answerLatencies(webhook, options.requests, inFlight));
              push(p50, row, latency.p50);
              push(p99, row, latency.p99);
              log(
                `  round ${round + 1}: ${row}: p50 ${latency.p50.toFixed(2)} ms, p99 ${latency.p99.toFixed(2)} ms`,
              );
            }
          }
          await backend.clean(queueName);
          const rate = await jobsPerSecond(backend, queue, options);
          push(rates, backend.name, rate);
          log(`  round ${round + 1}: ${backend.name}: ${Math.round(rate)} jobs/s through one worker`);
        } finally {
          await queue.close();
          await backend.clean(queueName);
        }
      }
    }
  } finally {
    for (const backend of backends) await backend.close();
  }
  const rows: QueueRow[] = [];
  for (const [name, values] of p50) {
    rows.push({
      name: `${name}: answer latency, handler ${options.workMs} ms`,
      unit: 'ms',
      ...spread(values),
      p99: spread(p99.get(name)!),
    });
  }
  for (const [name, values] of rates) {
    rows.push({
      name: `${name}: jobs per second, one worker (concurrency ${options.concurrency})`,
      unit: 'jobs/s',
      ...spread(values),
    });
  }
  return { rows, skipped };
}
