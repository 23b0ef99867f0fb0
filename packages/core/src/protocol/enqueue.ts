import { describeDelivery } from '../diagnostics/channels.js';
import { WebhookError } from '../errors.js';
import type { WebhookOutcome } from '../http/answers.js';
import type { Notification } from '../notification/types.js';
import { Timeout, withDeadline } from '../runtime/deadline.js';
import type { Received, Within } from './delivery.js';
import type { NotificationQueue, QueuedNotification } from './queue.js';
import type { Routes } from './routes.js';

/**
 * What a delivery comes to with the `queue` option: handed to the queue, already there, or reaching no handler; with
 * inline handlers also what they came to (`handled+queued` when they ran and the rest was handed on).
 */
type EnqueueOutcome = Exclude<WebhookOutcome, 'refused'>;

/** A verified notification handed to the queue instead of its handlers (but those registered `inline`). */
export type Enqueuer<C> = (received: Received<C>) => Promise<EnqueueOutcome>;

/** The webhook's run of the inline handlers, whether its store is transactional, and whether it has a ledger. */
interface InlinePart<C> {
  process(
    received: Received<C>,
    part: 'inline',
    within?: Within,
  ): PromiseLike<EnqueueOutcome> | EnqueueOutcome;
  transactional: boolean;
  ledgered: boolean;
}

/**
 * The web side of a queue: the key and the routes as `process` computes them (web and worker share one webhook
 * definition, so a notification no handler takes is answered `ignored` here and never queued), then one job bounded
 * by `timeoutMs`. The `ledger` records in the worker, unless the notification reaches inline handlers, which run
 * here first through `inline` (a stale or conflicting one is then answered so and never queued).
 */
export function createEnqueuer<C>(
  queue: NotificationQueue,
  routes: Routes<C>,
  keyFor: (notification: Notification) => string | undefined,
  timeoutMs: number,
  inline: InlinePart<C>,
): Enqueuer<C> {
  return async (received) => {
    const { notification, secretIndex, secretId, traced } = received;
    const key = keyFor(notification);
    const handlers = routes.match(notification);
    if (traced) {
      const facts = { key, secretIndex, secretId, raw: notification.raw };
      describeDelivery(traced, notification, facts, handlers.length);
    }
    // With a ledger every notification is recorded, in the worker: its listeners may be all the merchant has.
    if (handlers.length === 0 && !inline.ledgered) return 'ignored';
    // Only what the notification holds, and which secret verified it: never the signature or the secret.
    const job: QueuedNotification =
      secretId === undefined
        ? { key, data: notification.raw, secretIndex }
        : { key, data: notification.raw, secretIndex, secretId };
    const send = (signal: AbortSignal) => queue.enqueue(job, signal);
    const inlineCount = routes.hasInline ? handlers.filter((handler) => handler.inline).length : 0;
    if (inlineCount === 0) return enqueueWithin(send, timeoutMs);
    const untraced: Received<C> = { ...received, traced: undefined };
    if (inlineCount === handlers.length) return inline.process(untraced, 'inline');
    return inlineThenQueued(untraced, key, job, send);
  };

  /**
   * The inline handlers, then the job: written by their transaction where the store and the queue can (PostgresInbox
   * and the PostgreSQL engine), else enqueued once they committed, also after a duplicate (a crash may have come
   * between a commit and its enqueue: the service's retry then queues the job, which the queue keeps once).
   */
  async function inlineThenQueued(
    received: Received<C>,
    key: string | undefined,
    job: QueuedNotification,
    send: (signal: AbortSignal) => Promise<'queued' | 'duplicate'>,
  ): Promise<EnqueueOutcome> {
    const inTransaction = queue.enqueueInTransaction?.bind(queue);
    if (inTransaction && inline.transactional && key !== undefined) {
      const within = (tx: unknown) => enqueueWithin((signal) => inTransaction(tx, job, signal), timeoutMs);
      const ran = await inline.process(received, 'inline', within);
      return ran === 'handled' ? 'handled+queued' : ran;
    }
    const ran = await inline.process(received, 'inline');
    if (ran !== 'handled' && ran !== 'duplicate') return ran;
    const put = await enqueueWithin(send, timeoutMs);
    if (ran === 'handled') return 'handled+queued';
    return put;
  }
}

/** One `enqueue`, its signal aborted past `timeoutMs`; a rejection or the timeout is `queue.unavailable`. */
async function enqueueWithin(
  send: (signal: AbortSignal) => Promise<'queued' | 'duplicate'>,
  timeoutMs: number,
): Promise<'queued' | 'duplicate'> {
  const controller = new AbortController();
  const late = () => {
    const timeout = new Timeout('queue', timeoutMs);
    controller.abort(timeout);
    return timeout;
  };
  try {
    return await withDeadline(send(controller.signal), timeoutMs, late);
  } catch (cause) {
    throw queueUnavailable(cause, timeoutMs);
  }
}

function queueUnavailable(cause: unknown, timeoutMs: number): WebhookError {
  const what =
    cause instanceof Timeout
      ? `did not acknowledge the job within ${timeoutMs} ms (storeTimeoutMs)`
      : 'refused the job';
  return new WebhookError(
    'queue.unavailable',
    `the queue ${what}; the notification was not accepted, so the service's retry is safe.`,
    { cause },
  );
}
