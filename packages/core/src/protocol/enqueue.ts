import { describeDelivery } from '../diagnostics/channels.js';
import { WebhookError } from '../errors.js';
import type { WebhookOutcome } from '../http/answers.js';
import type { Notification } from '../notification/types.js';
import { Timeout, withDeadline } from '../runtime/deadline.js';
import { factsOf, type Received } from './delivery.js';
import type { NotificationQueue, QueuedNotification } from './queue.js';
import type { Routes } from './routes.js';

/** What a delivery comes to with the `queue` option: handed to the queue, already there, or reaching no handler. */
type EnqueueOutcome = Extract<WebhookOutcome, 'queued' | 'duplicate' | 'ignored'>;

/** A verified notification handed to the queue instead of its handlers. */
export type Enqueuer = (received: Received<unknown>) => Promise<EnqueueOutcome>;

/**
 * The web side of a queue: the key and the routes as `process` computes them (web and worker share one webhook
 * definition, so a notification no handler takes is answered `ignored` here and never queued), then one job bounded
 * by `timeoutMs`. `ordering` and `onStale` are the worker's: they depend on what was handled before, which only
 * the worker knows.
 */
export function createEnqueuer<C>(
  queue: NotificationQueue,
  routes: Routes<C>,
  keyFor: (notification: Notification) => string | undefined,
  timeoutMs: number,
): Enqueuer {
  return async (received) => {
    const { notification, secretIndex, secretId, traced } = received;
    const key = keyFor(notification);
    const handlers = routes.match(notification).length;
    if (traced) describeDelivery(traced, notification, factsOf(received, key), handlers);
    if (handlers === 0) return 'ignored';
    // Only what the notification holds, and which secret verified it: never the signature or the secret.
    const job: QueuedNotification =
      secretId === undefined
        ? { key, data: notification.raw, secretIndex }
        : { key, data: notification.raw, secretIndex, secretId };
    return enqueueWithin(queue, job, timeoutMs);
  };
}

/** One `enqueue`, its signal aborted past `timeoutMs`; a rejection or the timeout is `queue.unavailable`. */
async function enqueueWithin(
  queue: NotificationQueue,
  job: QueuedNotification,
  timeoutMs: number,
): Promise<'queued' | 'duplicate'> {
  const controller = new AbortController();
  const late = () => {
    const timeout = new Timeout('queue', timeoutMs);
    controller.abort(timeout);
    return timeout;
  };
  try {
    return await withDeadline(queue.enqueue(job, controller.signal), timeoutMs, late);
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
