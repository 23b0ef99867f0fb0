import type { WebhookHandler } from '../handler.js';
import { isMissing } from '../notification/missing.js';
import type { Notification } from '../notification/types.js';
import { duration, optionalFunction, optionError, positive, positiveInteger } from '../option-checks.js';
import { type ApiClientOptions, createApiClient, type ResendClient } from '../reconcile/api-client.js';
import { createReconciler, type ReconcileResult } from '../reconcile/reconciler.js';
import { isFinalStatus, type WatchedPayment, type WatchStore } from './contract.js';
import { MemoryWatchStore } from './memory.js';
import { type OverduePayment, reportOverdue, type WatchLogger } from './overdue.js';

/**
 * Options of `createPaymentWatch`.
 *
 * @example
 * createPaymentWatch({ api, webhook, store: new PostgresWatchStore({ pool }), onOverdue: (p) => alert(p) });
 */
export interface PaymentWatchOptions<C = undefined> {
  /** The service's API: its settings, or a client from `createApiClient` (only `resend` is used). */
  api: ApiClientOptions | ResendClient;
  /** The webhook handler whose handlers take a record a re-send answers (`webhook.process`, exactly once). */
  webhook?: Pick<WebhookHandler<C>, 'process'>;
  /** The context `process` passes to the handlers. */
  context?: C;
  /** Where the payments watched are kept. @default new MemoryWatchStore() */
  store?: WatchStore;
  /**
   * How long after its creation a payment without a final notification is overdue.
   * @default 900_000 (15 minutes)
   */
  deadlineMs?: number;
  /**
   * How long after a try a payment still unsettled is tried again.
   * @default 900_000 (15 minutes)
   */
  retryAfterMs?: number;
  /**
   * How many runs try a payment before it is reported overdue and no longer watched.
   * @default 3
   */
  maxTries?: number;
  /**
   * The most payments one run takes (the rest wait for the next run).
   * @default 100
   */
  batchSize?: number;
  /** How many re-sends start per second. @default 5 */
  requestsPerSecond?: number;
  /**
   * Called with each payment reported overdue (still unsettled after `maxTries`, or an order the service does not
   * know); its throw, or an async one's rejection, is ignored.
   */
  onOverdue?: (payment: OverduePayment) => void;
  /** Where each payment reported overdue is logged (`warn`); `false` for none. @default console */
  logger?: WatchLogger;
  /** @default Date.now */
  now?: () => number;
}

/**
 * A payment to watch, created elsewhere than through a client given the watch.
 *
 * @example
 * await watch.register({ orderId: 'o-1', operation: 'auth' });
 */
export interface WatchRegistration {
  orderId: string;
  /** @default 'purchase' */
  operation?: string;
  /** This payment's own deadline, from now. @default the watch's `deadlineMs` */
  deadlineMs?: number;
}

/**
 * What one run did: the payments settled by it, those still watched (tried again after `retryAfterMs`), and
 * those reported overdue.
 *
 * @example
 * const { settled, watching, overdue } = await watch.reconcileOverdue();
 */
export interface WatchRunReport {
  readonly settled: readonly WatchedPayment[];
  readonly watching: readonly WatchedPayment[];
  readonly overdue: readonly OverduePayment[];
}

/**
 * A watch over every payment created: `register` records it with a deadline, `settle` (a handler registered last)
 * drops it once a final notification's handlers succeeded, `reconcileOverdue` re-sends the overdue ones.
 *
 * @example
 * webhook.onAny(watch.settle);
 * setInterval(() => void watch.reconcileOverdue(), 5 * 60_000);
 */
export interface PaymentWatch {
  /** The store the payments are kept in. */
  readonly store: WatchStore;
  /**
   * Watches a payment; a second registration of one order keeps the first's deadline and tries, and resolves
   * `false`.
   */
  register(payment: WatchRegistration): Promise<boolean>;
  /** Stops watching a payment (the service refused its creation). */
  forget(orderId: string, operation?: string): Promise<void>;
  /**
   * A handler for `webhook.onAny`, registered after every other: it runs only once they all succeeded (inline, or
   * in the queue's worker), and a notification with a final status (not `init`, `pending`, `processing`) settles
   * its payment (not one naming another `pos_id` than the API client's).
   */
  readonly settle: (notification: Notification) => Promise<void>;
  /**
   * One run, to call on a schedule: takes the overdue payments, re-sends each through the API (a record answered
   * goes through `webhook.process`, exactly once), and reports those still unsettled after `maxTries` and orders
   * the service does not know. A run asked for while one is under way joins it.
   */
  reconcileOverdue(): Promise<WatchRunReport>;
}

/**
 * Creates a payment watch. Give it to `createApiClient({ ..., watch })` so every payment created is watched, and
 * register `watch.settle` last on the webhook handler.
 *
 * @example
 * const watch = createPaymentWatch({ api, webhook, store: new RedisWatchStore({ client: redis }) });
 * const client = createApiClient({ ...api, watch });
 * webhook.onAny(watch.settle);
 * setInterval(() => void watch.reconcileOverdue(), 5 * 60_000).unref();
 */
export function createPaymentWatch<C = undefined>(options: PaymentWatchOptions<C>): PaymentWatch {
  const settings = checkedSettings(options);
  const { store, now } = settings;
  let running: Promise<WatchRunReport> | undefined;
  return {
    store,
    async register({ orderId, operation = 'purchase', deadlineMs }) {
      if (typeof orderId !== 'string' || orderId === '')
        throw optionError('orderId', 'a non-empty string', orderId);
      const createdAt = now();
      const deadline = createdAt + duration('deadlineMs', deadlineMs, settings.deadlineMs, 0);
      // Notifications spell methods in lower case (`purchase`): `AUTH` registered would never be settled.
      return store.add({ orderId, operation: operation.toLowerCase(), createdAt, deadline, tries: 0 });
    },
    async forget(orderId, operation = 'purchase') {
      await store.remove(orderId, operation.toLowerCase());
    },
    settle: async function settleWatchedPayment(notification) {
      if (!isFinalStatus(notification.status) || !ofProject(notification, settings.api.posId)) return;
      await store.remove(String(notification.order_id), String(notification.method));
    },
    reconcileOverdue() {
      running ??= runOnce(settings).finally(() => {
        running = undefined;
      });
      return running;
    },
  };
}

/**
 * A handler serving several projects (a `secret` per pos_id) sees their notifications; order ids are the
 * merchant's per project, so another project's final status must not settle this watch's payment of one id.
 */
function ofProject(notification: Notification, posId: string | undefined): boolean {
  const other = notification.pos_id;
  return posId === undefined || isMissing(other) || String(other).toLowerCase() === posId.toLowerCase();
}

type Settings<C> = ReturnType<typeof checkedSettings<C>>;

function checkedSettings<C>(options: PaymentWatchOptions<C>) {
  if (typeof options.api !== 'object' || options.api === null) {
    throw optionError('api', 'the API client options or a client from createApiClient', options.api);
  }
  const store = options.store ?? new MemoryWatchStore();
  if (typeof store?.take !== 'function') throw optionError('store', 'a WatchStore', store, false);
  const api = options.api;
  return {
    api:
      typeof (api as ResendClient).resend === 'function'
        ? (api as ResendClient)
        : createApiClient(api as ApiClientOptions),
    webhook: options.webhook,
    context: options.context,
    store,
    deadlineMs: duration('deadlineMs', options.deadlineMs, 900_000, 0),
    retryAfterMs: duration('retryAfterMs', options.retryAfterMs, 900_000),
    maxTries: positiveInteger('maxTries', options.maxTries, 3),
    batchSize: positiveInteger('batchSize', options.batchSize, 100),
    requestsPerSecond: positive('requestsPerSecond', options.requestsPerSecond, 5),
    onOverdue: optionalFunction('onOverdue', options.onOverdue),
    logger: options.logger === undefined ? console : options.logger,
    now: optionalFunction('now', options.now) ?? Date.now,
  };
}

async function runOnce<C>(settings: Settings<C>): Promise<WatchRunReport> {
  const { store, now } = settings;
  const at = now();
  const taken = await store.take(at, at + settings.retryAfterMs, settings.batchSize);
  if (taken.length === 0) return { settled: [], watching: [], overdue: [] };
  const reconciler = createReconciler<C>({
    ...(settings.webhook ? { webhook: settings.webhook } : {}),
    ...(settings.context !== undefined ? { context: settings.context } : {}),
    api: settings.api,
    listPending: () =>
      taken.map((p) => ({ orderId: p.orderId, operation: p.operation, createdAt: p.createdAt })),
    now: () => at,
    requestsPerSecond: settings.requestsPerSecond,
  });
  const { results } = await reconciler.run();
  const report = {
    settled: [] as WatchedPayment[],
    watching: [] as WatchedPayment[],
    overdue: [] as OverduePayment[],
  };
  try {
    for (const [index, payment] of taken.entries()) {
      const result = results[index]!;
      const verdict = verdictOf(result, payment, settings.maxTries);
      if (verdict === 'watching') {
        report.watching.push(payment);
        continue;
      }
      const removed = await store.remove(payment.orderId, payment.operation);
      // Gone already: its final notification (the webhook the re-send asked for) settled it during the run.
      if (verdict === 'settled' || !removed) report.settled.push(payment);
      else report.overdue.push(overdueOf(payment, result, verdict));
    }
  } finally {
    // A store failing mid-run must not lose the reports of the payments it already stopped watching.
    reportOverdue(report.overdue, settings);
  }
  return report;
}

type Verdict = 'settled' | 'watching' | 'unknown_order' | 'unsettled';

/**
 * `applied` means the handlers took a final record (or had already); an order the service does not know is
 * reported at once, never tried again; anything else is watched until `maxTries`.
 */
function verdictOf(result: ReconcileResult, payment: WatchedPayment, maxTries: number): Verdict {
  if (result.status === 'applied') return 'settled';
  const code = (result.error as { code?: unknown } | undefined)?.code;
  if (result.status === 'failed' && code === 'api.not_found') return 'unknown_order';
  if (result.status === 'given_up' || payment.tries >= maxTries) return 'unsettled';
  return 'watching';
}

function overdueOf(
  payment: WatchedPayment,
  result: ReconcileResult,
  reason: 'unknown_order' | 'unsettled',
): OverduePayment {
  const code = (result.error as { code?: unknown } | undefined)?.code;
  return {
    orderId: payment.orderId,
    operation: payment.operation,
    createdAt: new Date(payment.createdAt),
    tries: payment.tries,
    reason,
    lastResult: result.status,
    ...(result.paymentStatus !== undefined ? { paymentStatus: result.paymentStatus } : {}),
    ...(typeof code === 'string' ? { errorCode: code } : {}),
  };
}
