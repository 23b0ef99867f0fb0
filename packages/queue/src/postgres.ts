import { randomUUID } from 'node:crypto';
import type { QueuedNotification } from '@payhook/core';
import type { PgQueryable } from '@payhook/core/postgres';
import pg from 'pg';
import PgBoss from 'pg-boss';
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
import { PostgresConsumer } from './postgres-consumer.js';
import { JobInserter } from './postgres-enqueue.js';
import { deadNotificationOf, jobIdOf, waitingNotificationOf } from './postgres-job.js';
import { type PostgresQueueOptions, type ResolvedOptions, resolveOptions } from './postgres-options.js';
import { PostgresJobs } from './postgres-sql.js';

export type { PostgresQueueOptions } from './postgres-options.js';

/**
 * The PostgreSQL engine, on pg-boss 10: one job per notification key in `<schema>.job`, retried with backoff,
 * kept as dead (pg-boss's `failed` state) after the last attempt. pg-boss starts on first use (it creates its
 * schema and the queue then); every process of the app, web or worker, may share the database.
 *
 * @example
 * const queue = createPostgresQueue({ connectionString: process.env.DATABASE_URL });
 * const webhook = createWebhookHandler({ secret, store, queue });
 */
export class PostgresQueue implements QueueEngine {
  readonly name = 'postgres';
  readonly #options: ResolvedOptions;
  readonly #db: PgQueryable;
  readonly #pool: pg.Pool | undefined;
  readonly #jobs: PostgresJobs;
  readonly #inserter: JobInserter;
  readonly #sql: PgBoss.Db;
  readonly #consumers = new Set<Consumer>();
  #boss: Promise<PgBoss> | undefined;
  #closed = false;

  constructor(options: PostgresQueueOptions) {
    this.#options = resolveOptions(options);
    if (options.pool) {
      this.#db = options.pool;
    } else {
      this.#pool = new pg.Pool({ connectionString: options.connectionString, max: options.max ?? 10 });
      this.#pool.on('error', (error) => this.#options.onError(error));
      this.#db = this.#pool;
    }
    const o = this.#options;
    this.#jobs = new PostgresJobs(this.#db, o.schema, o.name);
    this.#inserter = new JobInserter(this.#db, o.schema, o.name, {
      retryLimit: o.attempts - 1,
      retryDelay: o.retryDelay,
      retryBackoff: o.retryBackoff,
      expireInSeconds: o.stallSeconds,
    });
    const db = this.#db;
    this.#sql = { executeSql: (text, values) => db.query(text, values) as Promise<{ rows: unknown[] }> };
  }

  /**
   * Adds the job under its key's id with `INSERT … ON CONFLICT DO NOTHING` (pg-boss's `send`; enqueues made while
   * one is under way go in one statement), which inserts nothing when a job with that id exists in any state:
   * `'duplicate'`. Rejects when PostgreSQL fails or `signal` aborts first; an insert that still lands afterwards is
   * whole, and its redelivery a duplicate.
   */
  enqueue(job: QueuedNotification, signal: AbortSignal): Promise<'queued' | 'duplicate'> {
    return this.#send(job, signal, undefined);
  }

  /**
   * The same insert through `transaction`, the `pg` client of `PostgresInbox`'s transaction (`delivery.transaction`),
   * so the job commits or rolls back with the inline handlers' writes: the transactional outbox. The inbox and the
   * queue must share the database.
   */
  enqueueInTransaction(
    transaction: unknown,
    job: QueuedNotification,
    signal: AbortSignal,
  ): Promise<'queued' | 'duplicate'> {
    const client = transaction as PgQueryable | undefined;
    if (typeof client?.query !== 'function') {
      return Promise.reject(
        new TypeError('[@payhook/queue] enqueueInTransaction takes a pg client inside BEGIN.'),
      );
    }
    return this.#send(job, signal, {
      executeSql: (text, values) => client.query(text, values) as Promise<{ rows: unknown[] }>,
    });
  }

  async #send(
    job: QueuedNotification,
    signal: AbortSignal,
    db: PgBoss.Db | undefined,
  ): Promise<'queued' | 'duplicate'> {
    if (signal.aborted) throw aborted();
    const data = {
      key: job.key,
      data: job.data,
      secretIndex: job.secretIndex,
      ...(job.secretId === undefined ? {} : { secretId: job.secretId }),
    };
    const id = job.key === undefined ? randomUUID() : jobIdOf(job.key);
    // Inside the inbox's transaction the job is pg-boss's own `send` on that client; alone, it joins a batch.
    const sent =
      db === undefined
        ? this.#ready().then(() => this.#inserter.insert({ id, data }))
        : this.#ready().then((boss) => this.#sendIn(boss, db, id, data));
    const inserted = await untilAborted(sent, signal).catch((error: unknown) => {
      throw signal.aborted ? aborted() : unavailable(error);
    });
    return inserted ? 'queued' : 'duplicate';
  }

  async #sendIn(boss: PgBoss, db: PgBoss.Db, id: string, data: object): Promise<boolean> {
    const o = this.#options;
    const sent = await boss.send(o.name, data, {
      id,
      retryLimit: o.attempts - 1,
      retryDelay: o.retryDelay,
      retryBackoff: o.retryBackoff,
      expireInSeconds: o.stallSeconds,
      db,
    });
    return sent !== null;
  }

  async consume(run: JobRunner, options: ConsumeOptions): Promise<Consumer> {
    const { concurrency } = options;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new TypeError(`[@payhook/queue] concurrency must be a positive integer, not ${concurrency}.`);
    }
    const boss = await this.#ready();
    const o = this.#options;
    const consumer = new PostgresConsumer(
      {
        boss,
        jobs: this.#jobs,
        name: o.name,
        concurrency,
        pollingMs: o.pollingIntervalMs,
        heartbeatMs: (o.stallSeconds * 1000) / 3,
        onError: o.onError,
      },
      run,
    );
    this.#consumers.add(consumer);
    return consumer;
  }

  // The dead jobs need no pg-boss, only its table: listing a database where no queue ever ran creates nothing.
  async dead(filter?: DeadFilter): Promise<DeadNotification[]> {
    this.#open();
    return (await this.#jobs.dead(filter)).map(deadNotificationOf);
  }

  async replay(selection: DeadSelection): Promise<number> {
    this.#open();
    return this.#jobs.replay(selection);
  }

  async discard(selection: DeadSelection): Promise<number> {
    this.#open();
    return this.#jobs.discard(selection);
  }

  async waiting(filter?: WaitingFilter): Promise<WaitingNotification[]> {
    this.#open();
    return (await this.#jobs.waiting(filter)).map(waitingNotificationOf);
  }

  async purge(selection: WaitingSelection): Promise<number> {
    this.#open();
    return this.#jobs.purge(selection);
  }

  /** Stops its consumers (handing their running jobs back) and pg-boss, and ends the pool it opened. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#consumers].map((consumer) => consumer.stop(0)));
    const boss = await this.#boss?.catch(() => undefined);
    await boss?.stop({ graceful: false, close: false });
    await this.#pool?.end();
  }

  #open(): void {
    if (this.#closed) throw new Error('[@payhook/queue] the PostgreSQL queue is closed.');
  }

  #ready(): Promise<PgBoss> {
    try {
      this.#open();
    } catch (error) {
      return Promise.reject(error);
    }
    this.#boss ??= this.#start().catch((error: unknown) => {
      this.#boss = undefined;
      throw error;
    });
    return this.#boss;
  }

  async #start(): Promise<PgBoss> {
    const o = this.#options;
    // A new pg-boss per start: one whose start failed believes itself started.
    const boss = new PgBoss({
      db: this.#sql,
      schema: o.schema,
      schedule: false,
      maintenanceIntervalSeconds: o.maintenanceIntervalSeconds,
      archiveCompletedAfterSeconds: o.completedRetentionSeconds,
      archiveFailedAfterSeconds: o.deadRetentionSeconds,
    } as PgBoss.ConstructorOptions);
    boss.on('error', (error) => o.onError(error));
    await boss.start();
    try {
      await this.#jobs.createQueue();
    } catch (error) {
      await boss.stop({ graceful: false, close: false }).catch(() => {});
      throw error;
    }
    return boss;
  }
}

/**
 * The PostgreSQL queue engine of `@payhook/queue` (pg-boss 10). Hand it to `createWebhookHandler({ queue })` in
 * the web process and to `createWorker` in the workers.
 *
 * @example
 * const queue = createPostgresQueue({ connectionString: process.env.DATABASE_URL, attempts: 5 });
 */
export function createPostgresQueue(options: PostgresQueueOptions): PostgresQueue {
  return new PostgresQueue(options);
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function aborted(): Error {
  return new Error('[@payhook/queue] PostgreSQL did not take the job in time (the enqueue was aborted).');
}

function unavailable(cause: unknown): Error {
  const message = cause instanceof Error ? cause.message : String(cause);
  return new Error(`[@payhook/queue] PostgreSQL did not take the job: ${message}`, { cause });
}
