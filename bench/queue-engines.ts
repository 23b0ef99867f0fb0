import type { DedupeStore } from '@payhook/core';
import { Queue, Worker } from 'bullmq';
import PgBoss from 'pg-boss';
import { createDeliverySource } from './payload.js';

/** pg-boss's schema for the engine-alone rows, dropped with the bench's tables (`queue.ts`). */
export const PGBOSS_SCHEMA = 'payhook_bench_pgboss';

/** How many jobs the engine-alone rows queue and run, and at which concurrency: those of payhook's worker row. */
export interface EngineAloneOptions {
  jobs: number;
  concurrency: number;
  /** What each job does: nothing by default, or `claimAndCommit`'s store calls. */
  work?: () => Promise<void>;
}

/**
 * A job's work that is only the store calls exactly once takes, without payhook: a claim of a key of its own, then
 * its commit. The engine with this is the floor under payhook's worker on the same store.
 */
export function claimAndCommit(store: DedupeStore): () => Promise<void> {
  const run = `payhook-bench-floor:${Date.now()}:`;
  let jobs = 0;
  return async () => {
    const key = run + jobs++;
    const claim = await store.claim(key, 30_000);
    if (claim.status === 'claimed') await store.commit(key, claim.token, 60_000);
  };
}

const nothing = async () => {};

/** Runs `count` calls of `send`, `inFlight` at a time (the way the payhook row queues its notifications). */
async function sendAll(count: number, inFlight: number, send: (data: string) => Promise<unknown>) {
  const next = createDeliverySource();
  let sent = 0;
  const lane = async () => {
    while (sent++ < count) await send(next().data);
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

/**
 * BullMQ alone: `Queue.add` of `jobs` jobs (the notification's data), then a `Worker` doing nothing at the given
 * concurrency: jobs per second from the worker's start to its last completion.
 */
export async function bullmqAlone(url: string, name: string, options: EngineAloneOptions): Promise<number> {
  const connection = { url };
  const queue = new Queue(name, { connection });
  try {
    await sendAll(options.jobs, 20, (data) => queue.add('notification', { data }));
    let done = 0;
    let finished: () => void = () => {};
    const all = new Promise<void>((resolve) => {
      finished = resolve;
    });
    const started = performance.now();
    const worker = new Worker(name, options.work ?? nothing, {
      connection,
      concurrency: options.concurrency,
    });
    worker.on('completed', () => {
      if (++done === options.jobs) finished();
    });
    await all;
    const seconds = (performance.now() - started) / 1000;
    await worker.close();
    return options.jobs / seconds;
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

/**
 * pg-boss alone: `send` of `jobs` jobs, then its consumer doing nothing: `work` (a batch of `concurrency` jobs per
 * fetch, at its shortest polling interval, 0.5 s, which it waits between fetches even when jobs came), or, with
 * `loop`, `fetch` of `concurrency` jobs, their `work`, and `complete` of them, over and over.
 */
export async function pgBossAlone(
  url: string,
  name: string,
  options: EngineAloneOptions & { consumer: 'work' | 'loop' },
): Promise<number> {
  const boss = new PgBoss({ connectionString: url, schema: PGBOSS_SCHEMA, supervise: false });
  boss.on('error', () => {});
  await boss.start();
  try {
    await boss.createQueue(name);
    await sendAll(options.jobs, 20, (data) => boss.send(name, { data }));
    const started = performance.now();
    if (options.consumer === 'loop') {
      for (let done = 0; done < options.jobs; ) {
        const jobs = await boss.fetch(name, { batchSize: options.concurrency });
        if (jobs.length === 0) continue;
        if (options.work) await Promise.all(jobs.map(options.work));
        await boss.complete(
          name,
          jobs.map((job) => job.id),
        );
        done += jobs.length;
      }
    } else {
      let done = 0;
      let finished: () => void = () => {};
      const all = new Promise<void>((resolve) => {
        finished = resolve;
      });
      await boss.work(name, { batchSize: options.concurrency, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        done += jobs.length;
        if (done >= options.jobs) finished();
      });
      await all;
    }
    const seconds = (performance.now() - started) / 1000;
    await boss.offWork(name);
    return options.jobs / seconds;
  } finally {
    await boss.stop({ graceful: false });
  }
}
