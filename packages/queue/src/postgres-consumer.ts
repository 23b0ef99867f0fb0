import { Batcher } from '@payhook/core/adapter';
import type PgBoss from 'pg-boss';
import { type Consumer, type JobRunner, UnrecoverableJobError } from './engine.js';
import { errorOf, readJob } from './postgres-job.js';
import type { PostgresJobs } from './postgres-sql.js';

/** A job this consumer runs; `released` once it was handed back or expired, so its outcome is no longer ours. */
interface Running {
  readonly id: string;
  readonly controller: AbortController;
  released: boolean;
  /** Its run settled and the completion or failure is being written; its slot is free. */
  settling: boolean;
}

export interface ConsumerSetup {
  boss: PgBoss;
  /** The engine's connection, for the fetch's query. */
  sql: PgBoss.Db;
  jobs: PostgresJobs;
  name: string;
  concurrency: number;
  pollingMs: number;
  heartbeatMs: number;
  onError: (error: Error) => void;
}

/** Completions written at once; those of jobs settling meanwhile wait for a free one and then go together. */
const COMPLETE_LANES = 1;
/** At most this many jobs are completed in one statement. */
const MAX_COMPLETE = 256;

function pause(ms: number): { done: Promise<void>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return { done, cancel: () => clearTimeout(timer) };
}

/**
 * Fetches jobs while fewer than `concurrency` run, one fetch for all free slots, waits `pollingMs` when none came,
 * and sends the heartbeat of the running ones. A run that settles frees its slot at once; its job is completed
 * with those settling while a completion is being written, in one statement (a lone one at once, no timer), which
 * at full concurrency writes several jobs per statement. pg-boss's own `work()` is not used: it runs a fetched batch
 * to the end before it fetches again and fails running jobs at shutdown, where a consumer must hand them back.
 */
export class PostgresConsumer implements Consumer {
  readonly #setup: ConsumerSetup;
  readonly #run: JobRunner;
  readonly #running = new Map<string, Running>();
  readonly #completer: Batcher<string, void>;
  readonly #loop: Promise<void>;
  readonly #heartbeat: NodeJS.Timeout;
  #beating = false;
  /** The last fetch failed: the outage was reported, and the next failure is not until a fetch succeeds. */
  #fetchFailing = false;
  #stopping = false;
  #stopped: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #idle: (() => void)[] = [];

  constructor(setup: ConsumerSetup, run: JobRunner) {
    this.#setup = setup;
    this.#run = run;
    const { boss, name } = setup;
    this.#completer = new Batcher(
      async (ids) => {
        await boss.complete(name, [...ids]);
        return ids.map(() => undefined);
      },
      { lanes: COMPLETE_LANES, max: MAX_COMPLETE },
    );
    this.#loop = this.#take();
    this.#heartbeat = setInterval(() => void this.#beat(), setup.heartbeatMs);
  }

  async #take(): Promise<void> {
    const { concurrency, pollingMs } = this.#setup;
    while (!this.#stopping) {
      // Made before the fetch: a run settling while it is under way fetches again at once, not at the next poll.
      const woken = new Promise<void>((resolve) => (this.#wake = resolve));
      const free = concurrency - this.#runs();
      const jobs = free > 0 ? await this.#fetch(free) : [];
      if (this.#stopping) {
        await this.#handBack(jobs.map((job) => job.id));
        return;
      }
      // pg-boss picks the oldest jobs but returns them in no particular order (UPDATE … RETURNING): start them oldest first.
      jobs.sort((a, b) => a.createdOn.getTime() - b.createdOn.getTime());
      for (const job of jobs) this.#start(job);
      // The next fetch: when a run settles (a slot is free), or at the next poll.
      const wait = pause(pollingMs);
      await Promise.race([wait.done, woken]);
      wait.cancel();
    }
  }

  /**
   * pg-boss 10's `fetch` swallows its query's error and resolves no job (`manager.js`), so an outage would look like
   * an empty queue: its query goes through here to see the error. One report per outage, none on recovery.
   */
  async #fetch(batchSize: number): Promise<PgBoss.JobWithMetadata<unknown>[]> {
    const { boss, name, sql } = this.#setup;
    let failure: { error: unknown } | undefined;
    const db: PgBoss.Db = {
      executeSql: (text, values) =>
        sql.executeSql(text, values).catch((error: unknown) => {
          failure = { error };
          throw error;
        }),
    };
    const jobs = await boss.fetch<unknown>(name, { batchSize, includeMetadata: true, db });
    if (failure && !this.#fetchFailing) {
      this.#setup.onError(
        asError(failure.error, 'fetching jobs failed (reported once until a fetch succeeds again)'),
      );
    }
    this.#fetchFailing = failure !== undefined;
    return jobs;
  }

  #start(job: PgBoss.JobWithMetadata<unknown>): void {
    const running: Running = {
      id: job.id,
      controller: new AbortController(),
      released: false,
      settling: false,
    };
    this.#running.set(job.id, running);
    const attempt = { number: job.retryCount + 1, of: job.retryLimit + 1, signal: running.controller.signal };
    const { boss, jobs, name } = this.#setup;
    Promise.resolve()
      .then(() => this.#run(readJob(job.data), attempt))
      .then(
        () => this.#settle(running, () => this.#completer.call(job.id)),
        (error: unknown) =>
          this.#settle(running, () =>
            error instanceof UnrecoverableJobError
              ? jobs.bury(job.id, errorOf(error))
              : boss.fail(name, job.id, errorOf(error)),
          ),
      );
  }

  async #settle(running: Running, write: () => Promise<unknown>): Promise<void> {
    if (!running.released) {
      running.settling = true;
      this.#wake?.();
      try {
        await write();
      } catch (error) {
        // The job stays active without a heartbeat: stall detection hands it to a worker again.
        this.#setup.onError(asError(error, `could not record the outcome of job ${running.id}`));
      }
    }
    this.#forget(running);
  }

  /** The runs under way: a settled job's slot is free while its outcome is written, so the next run can start. */
  #runs(): number {
    let runs = 0;
    for (const running of this.#running.values()) if (!running.settling) runs++;
    return runs;
  }

  #forget(running: Running): void {
    if (this.#running.get(running.id) !== running) return;
    this.#running.delete(running.id);
    // A settled job's slot was freed when its run settled.
    if (!running.settling) this.#wake?.();
    if (this.#running.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  async #beat(): Promise<void> {
    const beating = [...this.#running.values()].filter((r) => !r.released && !r.settling);
    if (this.#beating || beating.length === 0) return;
    this.#beating = true;
    try {
      const alive = await this.#setup.jobs.heartbeat(beating.map((r) => r.id));
      for (const running of beating) {
        if (alive.has(running.id) || running.settling || running.released) continue;
        this.#release(running, 'its heartbeat came after stall detection expired it');
        this.#setup.onError(new Error(`[@payhook/queue] job ${running.id} expired while running here.`));
      }
    } catch (error) {
      this.#setup.onError(asError(error, 'the heartbeat of running jobs failed'));
    } finally {
      this.#beating = false;
    }
  }

  #release(running: Running, reason: string): void {
    running.released = true;
    running.controller.abort(new Error(`[@payhook/queue] job ${running.id} was handed back: ${reason}.`));
    this.#forget(running);
  }

  async #handBack(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.#setup.jobs.handBack(ids);
    } catch (error) {
      // Still active and without a heartbeat: stall detection hands them out again.
      this.#setup.onError(asError(error, `could not hand back ${ids.length} job(s)`));
    }
  }

  /** Takes no new job, waits up to `graceMs` for the running ones, then hands the rest back to the queue. */
  stop(graceMs: number): Promise<void> {
    this.#stopped ??= this.#stop(graceMs);
    return this.#stopped;
  }

  async #stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    const idle = new Promise<void>((resolve) =>
      this.#running.size === 0 ? resolve() : this.#idle.push(resolve),
    );
    const grace = pause(graceMs);
    await Promise.race([Promise.all([this.#loop, idle]), grace.done]);
    grace.cancel();
    clearInterval(this.#heartbeat);
    const left = [...this.#running.values()].filter((r) => !r.settling);
    for (const running of left) this.#release(running, 'the worker stopped');
    await this.#handBack(left.map((r) => r.id));
  }
}

function asError(error: unknown, what: string): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`[@payhook/queue] ${what}: ${message}`, { cause: error });
}
