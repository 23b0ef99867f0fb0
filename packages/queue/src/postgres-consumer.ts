import type PgBoss from 'pg-boss';
import { Attempt } from './attempt.js';
import { type Consumer, type JobRunner, UnrecoverableJobError } from './engine.js';
import { Completions } from './postgres-completions.js';
import { errorOf, readJob } from './postgres-job.js';
import type { FetchedJob, PostgresJobs } from './postgres-sql.js';
import { RunningJobs, type Slotted } from './running-jobs.js';

/** A job this consumer runs; `released` once it was handed back or expired, so its outcome is no longer ours. */
interface Running extends Slotted {
  readonly id: string;
  readonly attempt: Attempt;
  released: boolean;
  /** Its run settled and the completion or failure is being written; its slot is free. */
  settling: boolean;
}

export interface ConsumerSetup {
  boss: PgBoss;
  jobs: PostgresJobs;
  name: string;
  concurrency: number;
  pollingMs: number;
  heartbeatMs: number;
  onError: (error: Error) => void;
}

/** At most this many jobs are completed in one statement. */
const MAX_COMPLETE = 256;
/**
 * How long a freed slot waits for the others before a fetch fills it: longer than a group of jobs takes to settle
 * (at 2 ms groups split and the statements a job doubled), small beside a poll or a handler.
 */
export const FETCH_DELAY_MS = 10;

function pause(ms: number): { done: Promise<void>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return { done, cancel: () => clearTimeout(timer) };
}

/**
 * Fetches jobs for the free slots, one fetch for all of them, once every slot is free or `FETCH_DELAY_MS` after the
 * first one freed (a worker of one slot fetches as it frees, no timer), waits `pollingMs` when none came, and sends
 * the heartbeat of the running ones. A run that settles frees its slot at once; its job's completion waits for the
 * next fetch and goes in one statement with those settled meanwhile (or at once after the statement being written).
 * Jobs thus start and settle in groups, as in a loop of fetch, run, complete, so every statement batches as many,
 * without a slot waiting more than a few milliseconds behind a long handler. pg-boss's own `work()` is not used: it
 * runs a fetched batch to the end before it fetches again and fails running jobs at shutdown, where a consumer must
 * hand them back.
 */
export class PostgresConsumer implements Consumer {
  readonly #setup: ConsumerSetup;
  readonly #run: JobRunner;
  readonly #running = new RunningJobs<Running>();
  readonly #completions: Completions;
  readonly #loop: Promise<void>;
  readonly #heartbeat: NodeJS.Timeout;
  #beating = false;
  /** The last fetch failed: the outage was reported, and the next failure is not until a fetch succeeds. */
  #fetchFailing = false;
  #stopping = false;
  #stopped: Promise<void> | undefined;
  /** Ends the wait for the next fetch (set while the loop waits). */
  #fetchNow: (() => void) | undefined;
  #delay: NodeJS.Timeout | undefined;
  /** A slot freed since the last fetch began. */
  #freedSince = false;
  #idle: (() => void)[] = [];

  constructor(setup: ConsumerSetup, run: JobRunner) {
    this.#setup = setup;
    this.#run = run;
    const { boss, name } = setup;
    this.#completions = new Completions((ids) => boss.complete(name, ids), MAX_COMPLETE);
    this.#loop = this.#take();
    this.#heartbeat = setInterval(() => void this.#beat(), setup.heartbeatMs);
  }

  async #take(): Promise<void> {
    const { concurrency } = this.#setup;
    while (!this.#stopping) {
      this.#freedSince = false;
      const free = concurrency - this.#runs();
      const jobs = free > 0 ? await this.#fetch(free) : [];
      if (this.#stopping) {
        await this.#handBack(jobs.map((job) => job.id));
        return;
      }
      for (const job of jobs) this.#start(job);
      await this.#untilFetch();
    }
  }

  /**
   * Waits for the next fetch: once every slot is free, or `FETCH_DELAY_MS` after the first one freed, or at the
   * poll. Slots freeing one by one thus share a fetch and the jobs it brings start together, so the store's claims
   * and commits and the jobs' completions batch as they would in lock-step; a lone free slot behind long handlers
   * waits a few milliseconds, never a poll. The completions of jobs settling meanwhile go together beside the fetch.
   */
  async #untilFetch(): Promise<void> {
    let poll: NodeJS.Timeout | undefined;
    this.#completions.hold();
    try {
      await new Promise<void>((resolve) => {
        this.#fetchNow = resolve;
        poll = setTimeout(resolve, this.#setup.pollingMs);
        // Slots freed while the last fetch was under way.
        if (this.#freedSince) this.#freed();
      });
    } finally {
      this.#fetchNow = undefined;
      clearTimeout(poll);
      clearTimeout(this.#delay);
      this.#delay = undefined;
      this.#completions.write();
    }
  }

  /** A slot is free: the next fetch comes at once when none runs, else within `FETCH_DELAY_MS`. */
  #freed(): void {
    this.#freedSince = true;
    // While a fetch is under way, the loop looks at the slots once it is back.
    if (this.#fetchNow === undefined) return;
    if (this.#runs() === 0) this.#fetchNow();
    else this.#delay ??= setTimeout(this.#fetchNow, FETCH_DELAY_MS);
  }

  /** Takes up to `limit` jobs; an outage is reported once (none on recovery) and takes none. */
  async #fetch(limit: number): Promise<FetchedJob[]> {
    try {
      const jobs = await this.#setup.jobs.fetch(limit);
      this.#fetchFailing = false;
      return jobs;
    } catch (error) {
      if (!this.#fetchFailing) {
        this.#setup.onError(
          asError(error, 'fetching jobs failed (reported once until a fetch succeeds again)'),
        );
      }
      this.#fetchFailing = true;
      return [];
    }
  }

  #start(job: FetchedJob): void {
    const running: Running = {
      id: job.id,
      attempt: new Attempt(job.retry_count + 1, job.retry_limit + 1),
      released: false,
      settling: false,
      slot: -1,
    };
    this.#running.add(running);
    const { boss, jobs, name } = this.#setup;
    Promise.resolve()
      .then(() => this.#run(readJob(job.data), running.attempt))
      .then(
        () => this.#settle(running, () => this.#completions.add(job.id)),
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
      this.#freed();
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
    if (!this.#running.delete(running)) return;
    // A settled job's slot was freed when its run settled.
    if (!running.settling) this.#freed();
    if (this.#running.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  async #beat(): Promise<void> {
    const beating = this.#running.values().filter((r) => !r.released && !r.settling);
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
    running.attempt.abort(new Error(`[@payhook/queue] job ${running.id} was handed back: ${reason}.`));
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
    this.#fetchNow?.();
    const idle = new Promise<void>((resolve) =>
      this.#running.size === 0 ? resolve() : this.#idle.push(resolve),
    );
    const grace = pause(graceMs);
    await Promise.race([Promise.all([this.#loop, idle]), grace.done]);
    grace.cancel();
    clearInterval(this.#heartbeat);
    const left = this.#running.values().filter((r) => !r.settling);
    for (const running of left) this.#release(running, 'the worker stopped');
    await this.#handBack(left.map((r) => r.id));
  }
}

function asError(error: unknown, what: string): Error {
  const message = error instanceof Error ? error.message : String(error);
  return new Error(`[@payhook/queue] ${what}: ${message}`, { cause: error });
}
