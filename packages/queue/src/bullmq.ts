import { randomUUID } from 'node:crypto';
import type { QueuedNotification } from '@payhook/core';
import { type ConnectionOptions, type Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { consumeWithBullMQ, type WorkerSettings } from './bullmq-consumer.js';
import { deadOf, jobIdOf, jobIdsOf, type StoredJob, waitingOf } from './bullmq-jobs.js';
import type {
  ConsumeOptions,
  Consumer,
  DeadFilter,
  DeadNotification,
  DeadSelection,
  JobRunner,
  QueueEngine,
  WaitingFilter,
  WaitingNotification,
  WaitingSelection,
} from './engine.js';
import { integerOption, type QueueEngineOptions, resolveQueueOptions, secondsOf } from './options.js';

/**
 * Options of `createBullMQQueue`: the shared ones (`name`, `attempts`, `backoff`, `keepCompletedMs`, `keepDeadMs`,
 * as every engine names them), the Redis connection, and BullMQ's own stall detection.
 */
export interface BullMQQueueOptions extends QueueEngineOptions {
  /**
   * The Redis to hold the jobs: a URL (`redis://…`), ioredis options, or an ioredis instance (which `close` leaves
   * open). Workers need `maxRetriesPerRequest: null` on an instance they are given (on a `Cluster`, in its
   * `redisOptions`); BullMQ sets it on connections it makes.
   */
  connection: string | ConnectionOptions;
  /**
   * BullMQ's key prefix in Redis. On Redis Cluster (an ioredis `Cluster` as `connection`) it must hold a hash tag
   * (`{…}`), so that every key of the queue is in one slot, as BullMQ's scripts need.
   * @default 'bull', or '{bull}' when `connection` is an ioredis `Cluster`
   */
  prefix?: string;
  /**
   * How long a worker's lock on a running job lasts without renewal (renewed every half of it while the job runs):
   * a worker killed mid-job leaves it to another after this plus up to `stalledIntervalMs`.
   * @default 30_000
   */
  lockDurationMs?: number;
  /** How often each worker looks for jobs whose lock expired (their worker died), to queue them again. @default 30_000 */
  stalledIntervalMs?: number;
  /**
   * Redis replicates asynchronously: a job its master acknowledged and lost before a replica had it (the master
   * failed, its replica was promoted) is gone, and the notification was answered 200. With this, `enqueue` sends
   * `WAIT replicas timeoutMs` on the queue's connection after adding the job, and answers `queued` (or `duplicate`)
   * only once that many replicas acknowledged what the connection wrote; short of them it rejects, and the web side
   * answers 503, which the service retries. WAIT holds the connection while it waits: keep `timeoutMs` short.
   * @default undefined (what the master acknowledged counts)
   */
  waitForReplicas?: { replicas: number; timeoutMs: number };
  /**
   * How many times a job may be found stalled before it is kept as dead instead of run again (a notification that
   * crashes or blocks every worker that takes it).
   * @default 3
   */
  maxStalledCount?: number;
}

/**
 * A queue engine on BullMQ (Redis): the web side's `queue` option and a worker's `engine`. A job's id is its
 * notification key, so of any number of copies enqueued at once exactly one is queued (BullMQ adds a job id in one
 * Lua script); the others, and any copy while the job is queued, running, done (for `keepCompletedMs`) or dead,
 * are answered `duplicate`. Failed attempts are retried after `backoff`; a job that failed every attempt is kept as
 * dead until it is replayed or discarded, or `keepDeadMs` passes.
 *
 * @example
 * const queue = createBullMQQueue({ connection: process.env.REDIS_URL! });
 * const webhook = createWebhookHandler({ secret, store, queue }).on('purchase.success', fulfil); // web
 * await createWorker(webhook, queue); // worker
 */
export function createBullMQQueue(options: BullMQQueueOptions): QueueEngine {
  return new BullMQEngine(options);
}

const JOB_NAME = 'notification';

function waitOf(wait: BullMQQueueOptions['waitForReplicas']) {
  if (wait === undefined) return undefined;
  return {
    replicas: integerOption('waitForReplicas.replicas', wait.replicas ?? Number.NaN, 1),
    timeoutMs: integerOption('waitForReplicas.timeoutMs', wait.timeoutMs ?? Number.NaN, 1),
  };
}

/**
 * The prefix of the queue's keys: BullMQ's default, `{bull}` on an ioredis `Cluster` (whose `isCluster` is true), and
 * a prefix given for a cluster only with a hash tag: without one the keys of a job spread over slots, and each of
 * BullMQ's scripts fails with CROSSSLOT.
 */
function prefixFor(connection: ConnectionOptions, prefix: string | undefined): string | undefined {
  const cluster = (connection as { isCluster?: unknown }).isCluster === true;
  if (!cluster) return prefix;
  if (prefix === undefined) return '{bull}';
  if (!/\{[^}]+\}/.test(prefix)) {
    throw new TypeError(
      `[@payhook/queue] prefix must hold a hash tag on Redis Cluster, such as ${JSON.stringify(`{${prefix}}`)}, so that every key of the queue is in one slot, not ${JSON.stringify(prefix)}.`,
    );
  }
  return prefix;
}
/** How many dead jobs one read of the failed set takes, for `dead`, `replay` and `discard` over a filter. */
/** The states of a job queued and not running. */
const WAITING = ['waiting', 'prioritized', 'delayed'] as const;
const PAGE = 100;

class BullMQEngine implements QueueEngine {
  readonly name = 'bullmq';
  readonly #queue: Queue<StoredJob>;
  readonly #queueName: string;
  readonly #settings: WorkerSettings;
  readonly #consumers = new Set<Consumer>();
  /** A key of the queue (its metadata hash), which routes WAIT to the queue's node on a cluster. */
  readonly #metaKey: string;
  readonly #wait: { readonly replicas: number; readonly timeoutMs: number } | undefined;

  constructor(options: BullMQQueueOptions) {
    const connection =
      typeof options.connection === 'string' ? { url: options.connection } : options.connection;
    const prefix = prefixFor(connection, options.prefix);
    const shared = resolveQueueOptions(options);
    this.#queueName = shared.name;
    this.#metaKey = `${prefix ?? 'bull'}:${shared.name}:meta`;
    this.#wait = waitOf(options.waitForReplicas);
    this.#settings = {
      connection,
      prefix,
      lockDurationMs: integerOption('lockDurationMs', options.lockDurationMs, 30_000),
      stalledIntervalMs: integerOption('stalledIntervalMs', options.stalledIntervalMs, 30_000),
      maxStalledCount: integerOption('maxStalledCount', options.maxStalledCount, 3, 0),
    };
    this.#queue = new Queue<StoredJob>(this.#queueName, {
      connection,
      prefix,
      defaultJobOptions: {
        attempts: shared.attempts,
        backoff: { type: shared.backoff.type, delay: shared.backoff.delayMs },
        removeOnComplete: { age: secondsOf(shared.keepCompletedMs) },
        // BullMQ removes dead jobs past this age when another job fails (not on a timer): a quiet queue keeps them longer.
        removeOnFail: { age: secondsOf(shared.keepDeadMs) },
      },
    });
    this.#queue.on('error', () => {
      // A lost connection: ioredis reconnects; an enqueue meanwhile waits, and the web side answers 503 past its timeout.
    });
  }

  async enqueue(job: QueuedNotification, signal: AbortSignal): Promise<'queued' | 'duplicate'> {
    signal.throwIfAborted();
    const copy = randomUUID();
    const jobId = jobIdOf(job.key, copy);
    await this.#queue.add(JOB_NAME, { ...job, copy }, { jobId });
    if (job.key === undefined) return this.#replicated('queued');
    // BullMQ answers an id it holds already without adding anything: the stored copy tells which enqueue added it.
    const stored = await this.#queue.getJob(jobId);
    return this.#replicated(stored?.data.copy === copy ? 'queued' : 'duplicate');
  }

  /** `outcome`, once `waitForReplicas` replicas acknowledged what the queue's connection wrote (its job). */
  async #replicated<T>(outcome: T): Promise<T> {
    const wait = this.#wait;
    if (wait === undefined) return outcome;
    // On the connection that added the job (a cluster's: the queue's node, found by one of its keys).
    // Both ioredis clients take a pipeline as commands; the union of their types does not say so.
    const client = (await this.#queue.getBackend().client) as unknown as Pick<Redis, 'pipeline'>;
    const results = await client
      .pipeline([
        ['exists', this.#metaKey],
        ['wait', wait.replicas, wait.timeoutMs],
      ])
      .exec();
    const [error, acked] = results?.[1] ?? [new Error('no answer to WAIT'), 0];
    if (error) throw error;
    if (Number(acked) < wait.replicas) {
      throw new Error(
        `[@payhook/queue] the job was added on its Redis master, but ${acked} of the ${wait.replicas} replicas waitForReplicas asks for acknowledged it within ${wait.timeoutMs} ms: a failover now could lose it, so it is not answered queued (the service's retry finds it, or adds it again once it was lost).`,
      );
    }
    return outcome;
  }

  async consume(run: JobRunner, options: ConsumeOptions): Promise<Consumer> {
    const consumer = await consumeWithBullMQ(this.#queueName, this.#settings, run, options);
    this.#consumers.add(consumer);
    return {
      stop: async (graceMs) => {
        this.#consumers.delete(consumer);
        await consumer.stop(graceMs);
      },
    };
  }

  async dead(filter: DeadFilter = {}): Promise<DeadNotification[]> {
    const jobs = await this.#failed(filter.since, filter.limit ?? 100);
    return jobs.map(deadOf);
  }

  async replay(selection: DeadSelection): Promise<number> {
    return this.#each(selection, (job) =>
      job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }),
    );
  }

  async discard(selection: DeadSelection): Promise<number> {
    return this.#each(selection, (job) => job.remove());
  }

  async waiting(filter: WaitingFilter = {}): Promise<WaitingNotification[]> {
    const jobs = await this.#waitingJobs(filter.since, filter.limit ?? 100);
    return jobs.map(waitingOf);
  }

  async purge(selection: WaitingSelection): Promise<number> {
    const jobs =
      'ids' in selection
        ? await this.#waitingByIds(selection.ids)
        : await this.#waitingJobs(selection.since, Number.POSITIVE_INFINITY);
    let purged = 0;
    for (const job of jobs) {
      // A job a worker took meanwhile is locked: BullMQ refuses to remove it, and it is left to run.
      const removed = await job.remove().then(
        () => true,
        () => false,
      );
      if (removed) purged++;
    }
    return purged;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#consumers].map((consumer) => consumer.stop(0)));
    await this.#queue.close();
  }

  /** Waiting jobs (waiting, prioritized, or delayed until their next attempt), oldest queued first. */
  async #waitingJobs(since: Date | undefined, limit: number): Promise<Job<StoredJob>[]> {
    const found: Job<StoredJob>[] = [];
    for (const state of WAITING) {
      for (let start = 0; ; start += PAGE) {
        const page = (await this.#queue.getJobs([state], start, start + PAGE - 1, true)) as Job<StoredJob>[];
        for (const job of page) if (since === undefined || job.timestamp >= since.getTime()) found.push(job);
        if (page.length < PAGE) break;
      }
    }
    // Each state is a list of its own: the order across them is the queued time's.
    return found.sort((a, b) => a.timestamp - b.timestamp).slice(0, limit);
  }

  async #waitingByIds(ids: readonly string[]): Promise<Job<StoredJob>[]> {
    const jobs: Job<StoredJob>[] = [];
    for (const id of jobIdsOf(ids)) {
      const job = await this.#queue.getJob(id);
      if (job !== undefined && WAITING.includes((await job.getState()) as (typeof WAITING)[number])) {
        jobs.push(job);
      }
    }
    return jobs;
  }

  /** Dead jobs, oldest failure first, from `since`, at most `limit` (`Infinity`: all). */
  async #failed(since: Date | undefined, limit: number): Promise<Job<StoredJob>[]> {
    const found: Job<StoredJob>[] = [];
    for (let start = 0; found.length < limit; start += PAGE) {
      const page = (await this.#queue.getJobs(['failed'], start, start + PAGE - 1, true)) as Job<StoredJob>[];
      for (const job of page) {
        if (since === undefined || (job.finishedOn ?? 0) >= since.getTime()) found.push(job);
      }
      if (page.length < PAGE) break;
    }
    return found.slice(0, limit);
  }

  /** Runs `act` on each selected dead job; resolves how many there were. */
  async #each(selection: DeadSelection, act: (job: Job<StoredJob>) => Promise<unknown>): Promise<number> {
    const jobs =
      'ids' in selection
        ? await this.#deadByIds(selection.ids)
        : await this.#failed(selection.since, Number.POSITIVE_INFINITY);
    for (const job of jobs) await act(job);
    return jobs.length;
  }

  async #deadByIds(ids: readonly string[]): Promise<Job<StoredJob>[]> {
    const jobs: Job<StoredJob>[] = [];
    for (const id of jobIdsOf(ids)) {
      const job = await this.#queue.getJob(id);
      if (job !== undefined && (await job.isFailed())) jobs.push(job);
    }
    return jobs;
  }
}
