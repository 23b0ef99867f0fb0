import type { DedupeStore } from '@payhook/core';
import { Queue, Worker } from 'bullmq';
import PgBoss from 'pg-boss';
import { createIdSource, notificationJson } from './payload.js';

/** pg-boss's schema for the engine-alone rows, dropped with the bench's tables (`queue.ts`). */
export const PGBOSS_SCHEMA = 'payhook_bench_pgboss';

/** How many jobs the engine-alone rows queue and run, and at which concurrency: those of payhook's worker row. */
export interface EngineAloneOptions {
  jobs: number;
  concurrency: number;
  /** What each job does: nothing by default, or `claimAndCommit`'s store calls. */
  work?: () => Promise<void>;
  /** Called once the jobs are queued, right before the worker phase starts (`queue-profile.ts` starts there). */
  beforeWorker?: () => Promise<unknown>;
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

/**
 * Runs `count` calls of `send`, `inFlight` at a time (the way the payhook row queues its notifications), each with a
 * fresh notification as the hand-written minimum queues it (`queue-minimum.ts`): the decoded object, under an id of
 * its own (its payment id, a UUID), so the engine stores and reads back what it does for payhook's jobs.
 */
async function sendAll(
  count: number,
  inFlight: number,
  send: (notification: Record<string, unknown>, id: string) => Promise<unknown>,
) {
  const nextId = createIdSource();
  let sent = 0;
  const lane = async () => {
    while (sent++ < count) {
      const id = nextId();
      await send(JSON.parse(notificationJson(id)) as Record<string, unknown>, id);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

/** A worker phase: jobs per second from the consumer's start to its last completion, and its CPU per job. */
export interface WorkerRun {
  rate: number;
  /** The process's CPU (user + system, `process.cpuUsage`) over the phase, per job, in µs. */
  cpuUsPerJob: number;
}

/** Starts timing a worker phase of `jobs` jobs; the function it answers ends it. */
export function timeWorker(jobs: number): () => WorkerRun {
  const cpu = process.cpuUsage();
  const started = performance.now();
  return () => {
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - started) / 1000;
    return { rate: jobs / seconds, cpuUsPerJob: (used.user + used.system) / jobs };
  };
}

/**
 * BullMQ alone: `Queue.add` of `jobs` jobs (a notification each, as `sendAll` makes them), then a `Worker` doing nothing (or `work`) at
 * the given concurrency, timed from the worker's start to its last completion.
 */
export async function bullmqAlone(
  url: string,
  name: string,
  options: EngineAloneOptions,
): Promise<WorkerRun> {
  const connection = { url };
  const queue = new Queue(name, { connection });
  try {
    await sendAll(options.jobs, 20, (notification, id) =>
      queue.add('notification', notification, { jobId: `k.${id}` }),
    );
    let done = 0;
    let finished: () => void = () => {};
    const all = new Promise<void>((resolve) => {
      finished = resolve;
    });
    await options.beforeWorker?.();
    const stop = timeWorker(options.jobs);
    const worker = new Worker(name, options.work ?? nothing, {
      connection,
      concurrency: options.concurrency,
    });
    worker.on('completed', () => {
      if (++done === options.jobs) finished();
    });
    await all;
    const run = stop();
    await worker.close();
    return run;
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

/**
 * pg-boss alone: `send` of `jobs` jobs, then `fetch` of up to `concurrency` jobs, their work (nothing, or `work`),
 * and one `complete` of them, over and over: pg-boss's consumer at its own pace. (Its `work` waits out its polling
 * interval, 0.5 s at the least, after every batch, even when more jobs wait: 32 jobs a second at a batch of 16,
 * which measures the interval, not the engine; payhook's consumer fetches again as soon as a slot is free.)
 */
export async function pgBossAlone(
  url: string,
  name: string,
  options: EngineAloneOptions,
): Promise<WorkerRun> {
  const boss = new PgBoss({ connectionString: url, schema: PGBOSS_SCHEMA, supervise: false });
  boss.on('error', () => {});
  await boss.start();
  try {
    await boss.createQueue(name);
    await sendAll(options.jobs, 20, (notification, id) => boss.send(name, notification, { id }));
    await options.beforeWorker?.();
    const stop = timeWorker(options.jobs);
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
    return stop();
  } finally {
    await boss.stop({ graceful: false });
  }
}
