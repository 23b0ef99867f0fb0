import {
  type Notification,
  type ProcessOptions,
  parseNotification,
  type QueuedNotification,
  WebhookError,
  type WebhookHandler,
} from '@payhook/core';
import {
  type Consumer,
  type JobAttempt,
  type JobRunner,
  type QueueEngine,
  UnrecoverableJobError,
} from './engine.js';
import { integerOption } from './options.js';

/** Options of `createWorker`. */
export interface WorkerOptions<C = undefined> {
  /**
   * Jobs this worker runs at once. Handlers mostly wait on I/O (the store, an API, a mail server), so a few at once
   * keep one process busy, while each holds a claim and a connection of the store: 8 stays under a default pool.
   * @default 8
   */
  concurrency?: number;
  /** The handlers' context for a job (a database transaction, a logger with the job's key). */
  context?: (job: QueuedNotification) => C | Promise<C>;
  /**
   * On `stop`, how long running jobs may take to finish; those still running then are handed back to the queue
   * and their `delivery.signal` aborts. Another worker takes them, and waits on the store's claim while their run
   * here goes on: it ends as `duplicate` if that run commits, and runs the handlers only if it gave up.
   * @default 25_000 (under the 30 s most process managers wait between SIGTERM and SIGKILL)
   */
  graceMs?: number;
  /**
   * Stops the worker on SIGTERM and SIGINT, then closes the engine and calls `onShutdown`, so the process exits 0
   * once nothing else holds it open. `false` leaves signals to the application (call `stop` yourself).
   * @default true
   */
  stopOnSignals?: boolean;
  /**
   * After a signal stopped the worker, every run it started settled (committed, released or given up: a run
   * handed back keeps its store until then) and the engine closed: closes what else holds the process open, such
   * as the store's Redis client or pool (a worker always has one), so the process exits 0. Not called by `stop()`.
   */
  onShutdown?: () => unknown;
  /**
   * Opt-in: a short reason a failed attempt keeps, from what a handler threw (`handler.failed`), listed with the
   * dead job by `dead()` and `payhook queue list`. Return only what may be stored (no card data, no payload): it
   * is cut to one line of 200 characters. Without it, nothing the handler threw is stored.
   *
   * @example
   * failureReason: (error) => (error instanceof CourierError ? `courier ${error.status}` : undefined)
   */
  failureReason?: (error: unknown) => string | undefined;
  /** Where the worker says it started and stopped; `false` for nothing. @default console */
  logger?: Pick<Console, 'info' | 'error'> | false;
}

/** A started worker. */
export interface QueueWorker {
  /** Takes no new job, lets running ones finish up to `graceMs`, hands back the rest. Resolves once done; idempotent. */
  stop(): Promise<void>;
  /**
   * Resolves once every run this worker started has settled (committed, released or given up), those of jobs it
   * handed back too: after `stop()`, await it before closing the store.
   */
  settled(): Promise<void>;
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Starts a worker: takes jobs from `engine` and runs each notification's handlers with `webhook.process`, so the
 * same `.on(...)` handlers run in the same order, each once per notification across retries and crashes (the
 * store records each handler's completion). A handled, duplicate, ignored or stale notification completes its
 * job; a refusal (`handler.failed`, `handler.timeout`, `store.unavailable`, `claim.lost`, `notification.in_flight`)
 * fails the attempt, which the engine retries with backoff and keeps as dead after the last.
 *
 * @example
 * const engine = createBullMQQueue({ connection: process.env.REDIS_URL! });
 * const worker = await createWorker(webhook, engine, { concurrency: 4 });
 * // SIGTERM stops it; or: await worker.stop();
 */
export async function createWorker<C = undefined>(
  webhook: WebhookHandler<C>,
  engine: QueueEngine,
  options: WorkerOptions<C> = {},
): Promise<QueueWorker> {
  const concurrency = integerOption('concurrency', options.concurrency, 8);
  const graceMs = integerOption('graceMs', options.graceMs, 25_000, 0);
  const logger = options.logger === undefined ? console : options.logger || undefined;
  const running = new RunCount();
  const consumer = await engine.consume(runnerFor(webhook, options, running), { concurrency });
  logger?.info(`[@payhook/queue] worker ready on ${engine.name} (concurrency ${concurrency})`);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= stopConsumer(consumer, graceMs, () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    });
    return stopping;
  };
  const settled = async (): Promise<void> => {
    await running.none();
    // Runs that went on past their answer (handlerTimeoutMs) are the webhook's to wait for.
    await webhook.settled();
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    logger?.info(`[@payhook/queue] ${signal}: stopping the worker (up to ${graceMs} ms)`);
    stop()
      .then(settled)
      .then(() => engine.close())
      .then(() => options.onShutdown?.())
      .catch((error: unknown) => logger?.error('[@payhook/queue] the worker did not stop cleanly', error));
  };
  if (options.stopOnSignals ?? true) for (const signal of SIGNALS) process.once(signal, onSignal);
  return { stop, settled };
}

/**
 * One job: the notification parsed again from what the web side verified, then its handlers through `process`,
 * whose `delivery.signal` aborts with the attempt's (the job handed back). The run counts in `running` until it settles.
 */
function runnerFor<C>(webhook: WebhookHandler<C>, options: WorkerOptions<C>, running: RunCount): JobRunner {
  const { context, failureReason } = options;
  return async (job, attempt) => {
    const notification = parsed(job);
    running.start();
    try {
      const handlerContext = context ? await context(job) : undefined;
      await webhook.process(notification, handlerContext, new JobProcessOptions(job, attempt));
    } catch (error) {
      // The engine records the code and these words, and the reason only when `failureReason` gave one.
      throw attemptFailed(error, failureReason);
    } finally {
      running.end();
    }
  };
}

/**
 * `process`'s options for a job's handlers. A class: its `signal` getter, which the run reads only once a handler
 * reads `delivery.signal` (so the attempt makes its signal then, not per job), is one on the prototype, where an
 * object literal's own getter cost a new one per job.
 */
class JobProcessOptions implements ProcessOptions {
  readonly secretIndex: number;
  readonly secretId: string | undefined;
  /** The handlers registered `{ inline: true }` ran in the request. */
  readonly queued = true;
  readonly #attempt: JobAttempt;

  constructor(job: QueuedNotification, attempt: JobAttempt) {
    this.secretIndex = job.secretIndex;
    this.secretId = job.secretId;
    this.#attempt = attempt;
  }

  get signal(): AbortSignal {
    return this.#attempt.signal;
  }
}

/**
 * How many jobs' runs are under way, and who waits for none to be. A count, not a Set of their promises: a long-lived
 * Set with an entry added and deleted per job keeps, once in the old generation, every table it outgrew and the runs
 * they held alive through young collections (V8 links each table to the next).
 */
class RunCount {
  #count = 0;
  #waiting: (() => void)[] = [];

  start(): void {
    this.#count++;
  }

  end(): void {
    if (--this.#count === 0) for (const resolve of this.#waiting.splice(0)) resolve();
  }

  /** Resolves once no run is under way. */
  none(): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/** A failed attempt as the engine stores it: a payhook code, a message, and the opt-in reason. */
class AttemptFailed extends Error {
  readonly code: string | undefined;
  readonly reason: string | undefined;

  constructor(code: string | undefined, message: string, reason: string | undefined) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

const WORKER_FAILED =
  "[@payhook/queue] the attempt failed outside the handlers (in the worker's context function or the engine): the job is tried again; give failureReason to keep a reason.";

/** The worker's words for what core words for a delivery ("answered 503", "when redelivered"). */
const WORKER_WORDS: Readonly<Record<string, string>> = {
  'handler.failed':
    "[@payhook/queue] a handler failed (what it threw went to the webhook's onError and logger): the job's next attempt runs the handlers that have not succeeded; after the last attempt the job is dead.",
  'handler.timeout':
    '[@payhook/queue] a handler did not settle within handlerTimeoutMs: it goes on here, the next attempt waits for it and ends as duplicate once it succeeded (given up after ten handlerTimeoutMs).',
};

function attemptFailed(error: unknown, failureReason: WorkerOptions['failureReason']): AttemptFailed {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof WebhookError)) {
    // Not payhook's: what the worker's `context` or the engine threw may hold anything (a connection string), so
    // the dead job keeps the worker's words, and the merchant's own reason only through `failureReason`.
    const reason = failureReason ? reasonFor(error, failureReason) : undefined;
    return new AttemptFailed('worker.failed', WORKER_FAILED, reason);
  }
  const reason =
    error.code === 'handler.failed' && failureReason ? reasonFor(error.cause, failureReason) : undefined;
  return new AttemptFailed(error.code, WORKER_WORDS[error.code] ?? message, reason);
}

/** The merchant's reason for what a handler threw; none when the function throws or gives no string. */
function reasonFor(
  thrown: unknown,
  failureReason: (error: unknown) => string | undefined,
): string | undefined {
  try {
    const reason = failureReason(thrown);
    return typeof reason === 'string' ? reason : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The job's notification, or an unrecoverable refusal: data that does not parse now (a job written by another
 * version, or by hand) never will, so every retry would be spent for nothing.
 */
function parsed(job: QueuedNotification): Notification {
  try {
    return parseNotification(job.data);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UnrecoverableJobError(error instanceof Error ? error.message : String(error), {
      code: typeof code === 'string' ? code : undefined,
      cause: error,
    });
  }
}

async function stopConsumer(consumer: Consumer, graceMs: number, cleanUp: () => void): Promise<void> {
  cleanUp();
  await consumer.stop(graceMs);
}
