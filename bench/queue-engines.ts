import { fork } from 'node:child_process';
import type { DedupeStore } from '@payhook/core';
import { Queue, Worker } from 'bullmq';
import PgBoss from 'pg-boss';
import { nextMessage } from './child.js';
import type { EnqueueRequest } from './queue-enqueue-child.js';

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

const ENQUEUER = new URL('./queue-enqueue-child.ts', import.meta.url);

/**
 * Queues a worker row's jobs from a process of its own, as a web process does in production: the worker phase that
 * follows, in this process, then starts from the same heap whichever way its jobs were queued. (Queued here,
 * payhook's web side left more in the old generation than the engine's own `add`, so a full collection came sooner
 * in payhook's worker phases: the same BullMQ worker cost about 1.06× more after payhook's enqueues.)
 */
export async function queuedElsewhere(request: EnqueueRequest): Promise<void> {
  const child = fork(ENQUEUER, [JSON.stringify(request)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await nextMessage<'queued'>(child, `queueing ${request.jobs} jobs (${request.via}, ${request.engine})`);
  child.kill();
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
 * BullMQ alone: `Queue.add` of `jobs` jobs (a notification each, by `queuedElsewhere`), then a `Worker` doing nothing
 * (or `work`) at the given concurrency, timed from the worker's start to its last completion.
 */
export async function bullmqAlone(
  url: string,
  name: string,
  options: EngineAloneOptions,
): Promise<WorkerRun> {
  const connection = { url };
  const queue = new Queue(name, { connection });
  try {
    await queuedElsewhere({ engine: 'bullmq', via: 'engine', url, name, jobs: options.jobs });
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
    await queuedElsewhere({
      engine: 'postgres',
      via: 'engine',
      url,
      name,
      jobs: options.jobs,
      schema: PGBOSS_SCHEMA,
    });
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
