import {
  type Notification,
  parseNotification,
  type QueuedNotification,
  type WebhookHandler,
} from '@payhook/core';
import { type Consumer, type JobRunner, type QueueEngine, UnrecoverableJobError } from './engine.js';
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
   * (another worker takes them; the store keeps their handlers from running twice).
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
   * After a signal stopped the worker and closed the engine: closes what else holds the process open, such as the
   * store's Redis client or pool (a worker always has one), so the process exits 0. Not called by `stop()`.
   */
  onShutdown?: () => unknown;
  /** Where the worker says it started and stopped; `false` for nothing. @default console */
  logger?: Pick<Console, 'info' | 'error'> | false;
}

/** A started worker. */
export interface QueueWorker {
  /** Takes no new job, lets running ones finish up to `graceMs`, hands back the rest. Resolves once done; idempotent. */
  stop(): Promise<void>;
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
  const consumer = await engine.consume(runnerFor(webhook, options.context), { concurrency });
  logger?.info(`[@payhook/queue] worker ready on ${engine.name} (concurrency ${concurrency})`);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= stopConsumer(consumer, graceMs, () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
    });
    return stopping;
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    logger?.info(`[@payhook/queue] ${signal}: stopping the worker (up to ${graceMs} ms)`);
    stop()
      .then(() => engine.close())
      .then(() => options.onShutdown?.())
      .catch((error: unknown) => logger?.error('[@payhook/queue] the worker did not stop cleanly', error));
  };
  if (options.stopOnSignals ?? true) for (const signal of SIGNALS) process.once(signal, onSignal);
  return { stop };
}

/** One job: the notification parsed again from what the web side verified, then its handlers through `process`. */
function runnerFor<C>(webhook: WebhookHandler<C>, context: WorkerOptions<C>['context']): JobRunner {
  return async (job) => {
    const notification = parsed(job);
    const handlerContext = context ? await context(job) : (undefined as C);
    // Throws the WebhookError a delivery would answer with: the engine records its code and message.
    await webhook.process(notification, handlerContext, {
      secretIndex: job.secretIndex,
      secretId: job.secretId,
    });
  };
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
