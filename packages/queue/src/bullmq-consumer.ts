import { type ConnectionOptions, type Job, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import { Attempt } from './attempt.js';
import { failureOf, queuedOf, type StoredJob } from './bullmq-jobs.js';
import { type ConsumeOptions, type Consumer, type JobRunner, UnrecoverableJobError } from './engine.js';
import { RunningJobs, type Slotted } from './running-jobs.js';

/** BullMQ's worker settings `consume` passes on. */
export interface WorkerSettings {
  readonly connection: ConnectionOptions;
  readonly prefix: string | undefined;
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  readonly maxStalledCount: number;
}

/** A job this worker is running: handed back to the queue when `stop`'s grace runs out. */
class Running implements Slotted {
  readonly job: Job<StoredJob>;
  readonly token: string;
  readonly attempt: Attempt;
  slot = -1;
  #handBack: ((outcome: 'handed back') => void) | undefined;

  constructor(job: Job<StoredJob>, token: string) {
    this.job = job;
    this.token = token;
    this.attempt = new Attempt(job.attemptsMade + 1, job.opts.attempts ?? 1);
  }

  /** Settles as `run` does, or with `handed back` once `handBack` is called first. */
  until(run: Promise<void>): Promise<'ran' | 'handed back'> {
    return new Promise((resolve, reject) => {
      this.#handBack = resolve;
      run.then(() => resolve('ran'), reject);
    });
  }

  handBack(): void {
    this.#handBack?.('handed back');
  }
}

/**
 * A BullMQ `Worker` running `run` for each job. A job whose worker died keeps its lock until `lockDurationMs`, then
 * BullMQ's stalled check (every `stalledIntervalMs`, in every worker) moves it back to waiting.
 */
export async function consumeWithBullMQ(
  name: string,
  settings: WorkerSettings,
  run: JobRunner,
  options: ConsumeOptions,
): Promise<Consumer> {
  const running = new RunningJobs<Running>();
  const worker = new Worker<StoredJob>(
    name,
    async (job, token) => {
      const entry = new Running(job, token!);
      running.add(entry);
      try {
        const ran = await entry.until(run(queuedOf(job.data), entry.attempt));
        // Moved back to waiting by `stop`: nothing more to record for this attempt.
        if (ran === 'handed back') throw new WaitingError();
      } catch (error) {
        if (error instanceof WaitingError) throw error;
        // BullMQ's own kind of error is what makes it skip the remaining attempts.
        if (error instanceof UnrecoverableJobError) throw new UnrecoverableError(failureOf(error).message);
        throw failureOf(error);
      } finally {
        running.delete(entry);
      }
    },
    {
      connection: settings.connection,
      prefix: settings.prefix,
      concurrency: options.concurrency,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      maxStalledCount: settings.maxStalledCount,
      autorun: false,
    },
  );
  worker.on('error', () => {
    // Connection errors: ioredis reconnects by itself, and the stalled check recovers what a lost lock left.
  });
  void worker.run();
  await worker.waitUntilReady();
  return { stop: (graceMs) => stopWorker(worker, running, graceMs) };
}

/** Takes no new job; waits up to `graceMs` for running ones, then moves the rest back to waiting and closes. */
async function stopWorker(
  worker: Worker<StoredJob>,
  running: RunningJobs<Running>,
  graceMs: number,
): Promise<void> {
  const closing = worker.close();
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), graceMs);
  });
  const finished = await Promise.race([closing.then(() => 'closed' as const), graceOver]);
  clearTimeout(timer);
  if (finished === 'closed') return;
  await Promise.all(
    running.values().map(async (entry) => {
      await entry.job.moveToWait(entry.token).catch(() => undefined);
      entry.handBack();
      // Only once the job is back: a handler that throws on its signal must not fail the attempt first.
      entry.attempt.abort(new Error('[@payhook/queue] the worker stopped; the job was handed back.'));
    }),
  );
  await closing;
}
