/**
 * A verified notification as a queue holds it: what a worker needs to run its handlers, and nothing the
 * notification itself does not hold (no signature, no secret, no request).
 *
 * @example
 * const job: QueuedNotification = { key: 'purchase:42:success', data: notification.raw, secretIndex: 0 };
 */
export interface QueuedNotification {
  /** The notification's key (`boundKey` of the `key` option): the job's unique id; `undefined` when nothing tells it apart. */
  readonly key: string | undefined;
  /** The decoded object as the service sent it (`notification.raw`): the worker parses it again. */
  readonly data: Readonly<Record<string, unknown>>;
  /** The position of the secret its signature matched (0 = current). */
  readonly secretIndex: number;
  /** That secret's `id`, when secrets are named. */
  readonly secretId?: string;
}

/**
 * What `createWebhookHandler({ queue })` hands each verified notification to, instead of running its handlers in the
 * request. The answer is 200 only once `enqueue` resolved (the engine acknowledged the job); a rejection, or no
 * answer within `storeTimeoutMs` (the signal then aborts), answers 503 `queue.unavailable` with `Retry-After`.
 * `@payhook/queue` implements it on BullMQ and on PostgreSQL.
 *
 * @example
 * const queue: NotificationQueue = { enqueue: async (job) => (await jobs.add(job)) ? 'queued' : 'duplicate' };
 */
export interface NotificationQueue {
  /**
   * Resolves `'queued'`, or `'duplicate'` when a job under the same key is already queued, running, done or dead
   * (nothing is added then). Rejects when the engine could not take the job.
   */
  enqueue(job: QueuedNotification, signal: AbortSignal): Promise<'queued' | 'duplicate'>;
  /**
   * Adds the job with a transactional store's transaction (`PostgresInbox`'s client inside `BEGIN`), so it commits
   * or rolls back with it: the transactional outbox of a webhook with inline handlers. Optional: without it the job
   * is enqueued after the commit. The PostgreSQL engine of `@payhook/queue` implements it (same database).
   */
  enqueueInTransaction?(
    transaction: unknown,
    job: QueuedNotification,
    signal: AbortSignal,
  ): Promise<'queued' | 'duplicate'>;
}
