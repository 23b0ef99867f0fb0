import type { Notification, WebhookHandler } from '@payhook/core';
import { isMissing } from '@payhook/core/adapter';
import type { PaymentLedger } from '../ledger/ledger.js';
import { duration, optionalFunction, optionError, positive, positiveInteger } from '../option-checks.js';
import { type ApiClientOptions, createApiClient, type ResendClient } from '../reconcile/api-client.js';
import { BoundedWatchStore } from './bounded.js';
import { isFinalStatus, type WatchStore, watchRefusal } from './contract.js';
import { MemoryWatchStore } from './memory.js';
import type { OverduePayment, WatchLogger, WatchOutage } from './overdue.js';
import { type RunSettings, runOnce, type WatchRunReport } from './run.js';

export type { WatchRunReport } from './run.js';

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
   * How many runs ask the service about a payment before it is reported overdue and no longer watched. A run that
   * could not reach the service's API for it (`api.network`, `api.timeout`, `api.server`, a 429) counts no try.
   * @default 3
   */
  maxTries?: number;
  /**
   * How long every run must have failed to reach the service's API about a payment (counted from the first such
   * run since one last reached it, not from its registration) before it is reported overdue (`api_unreachable`)
   * and no longer watched, so an outage never keeps one watched forever.
   * @default 86_400_000 (24 hours)
   */
  unreachableAfterMs?: number;
  /**
   * The longest one call to the watch's store may take before it fails with a `StoreError`
   * (`store.unavailable`): a store that never answers ends the run instead of stalling it and every run after.
   * @default 2_000
   */
  storeTimeoutMs?: number;
  /**
   * The most payments one run takes (the rest wait for the next run).
   * @default 100
   */
  batchSize?: number;
  /** How many re-sends start per second. @default 5 */
  requestsPerSecond?: number;
  /**
   * The longest one re-send may take, answer included, before it fails with `api.timeout` (the payment stays
   * watched, no try counted): a `ResendClient` of your own that never settles ends its call, not the run. Above the
   * API client's own `timeoutMs` (10 s), which fires first for a client from `createApiClient`.
   * @default 30_000
   */
  resendTimeoutMs?: number;
  /**
   * Called with each payment reported overdue (still unsettled after `maxTries`, an order the service does not
   * know, or one its API could not be asked about for `unreachableAfterMs`); its throw, or an async one's
   * rejection, is ignored.
   */
  onOverdue?: (payment: OverduePayment) => void;
  /**
   * Called once per run in which the service's API could not be asked about some payments (they stay watched,
   * no try counted; after 3 unreachable answers in a row the run asks about none of the rest of its batch, and
   * they are in the report too), besides a `warn` line in the log; its throw, or an async one's rejection, is
   * ignored.
   */
  onUnreachable?: (outage: WatchOutage) => void;
  /** Where each payment reported overdue, and each run the API could not be reached, is logged (`warn`); `false` for none. @default console */
  logger?: WatchLogger;
  /** @default Date.now */
  now?: () => number;
  /**
   * The webhook's payment ledger (`createPaymentLedger`): the watch then settles a payment from its transitions
   * (past `pending`), not only from notifications reaching `settle`: a refund arriving before its payment's success
   * makes the payment `paid` in the ledger (an implied transition), and the watch settles it then, not when the
   * success comes, if it ever does.
   */
  ledger?: Pick<PaymentLedger, 'onTransition'>;
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
   * `false`. An order id or operation no store could keep is refused (`WatchError`) before the store is called;
   * a registration that times out (`store.unavailable`) and lands later is taken back.
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
   * goes through `webhook.process`, exactly once), and reports those still unsettled after `maxTries`, orders
   * the service does not know, and those its API could not be asked about for `unreachableAfterMs`. A run asked
   * for while one is under way joins it; every store call is bounded by `storeTimeoutMs`, so a run never waits on
   * a store that stopped answering.
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
  const { store, calls, now } = settings;
  let running: Promise<WatchRunReport> | undefined;
  options.ledger?.onTransition(async (t) => {
    if (t.subject === 'subscription' || t.to === 'pending' || t.to === 'new') return;
    // The ledger keeps the payment by order, not by operation: whichever was watched is settled.
    await calls.remove(t.orderId, 'purchase');
    await calls.remove(t.orderId, 'auth');
  });
  return {
    store,
    async register({ orderId, operation = 'purchase', deadlineMs }) {
      if (typeof orderId !== 'string' || orderId === '')
        throw optionError('orderId', 'a non-empty string', orderId);
      // Notifications spell methods in lower case (`purchase`): `AUTH` registered would never be settled.
      const op = typeof operation === 'string' ? operation.toLowerCase() : operation;
      const refusal = watchRefusal(orderId, op);
      if (refusal) throw refusal;
      const createdAt = now();
      const deadline = createdAt + duration('deadlineMs', deadlineMs, settings.deadlineMs, 0);
      // An add that lands after its timeout was answered `store.unavailable`: the create was not sent, so the
      // entry it leaves would be reported `unknown_order` at its deadline. Take it back.
      const late = (added: boolean) => (added ? store.remove(orderId, op) : undefined);
      return calls.add({ orderId, operation: op, createdAt, deadline, tries: 0 }, late);
    },
    async forget(orderId, operation = 'purchase') {
      const op = operation.toLowerCase();
      if (watchRefusal(orderId, op)) return; // nothing can be watched under it
      await calls.remove(orderId, op);
    },
    settle: async function settleWatchedPayment(notification) {
      if (!isFinalStatus(notification.status) || !ofProject(notification, settings.api.posId)) return;
      const orderId = String(notification.order_id);
      const operation = String(notification.method);
      // A notification no payment could be watched under settles nothing, and must not fail the handlers.
      if (watchRefusal(orderId, operation)) return;
      await calls.remove(orderId, operation);
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

function checkedSettings<C>(
  options: PaymentWatchOptions<C>,
): RunSettings<C> & { readonly store: WatchStore; readonly deadlineMs: number } {
  if (typeof options.api !== 'object' || options.api === null) {
    throw optionError('api', 'the API client options or a client from createApiClient', options.api);
  }
  const store = options.store ?? new MemoryWatchStore();
  const methods = ['add', 'take', 'giveBack', 'remove'] as const;
  if (!methods.every((m) => typeof store?.[m] === 'function')) {
    throw optionError('store', 'a WatchStore (add, take, giveBack, remove)', store, false);
  }
  const api = options.api;
  return {
    api:
      typeof (api as ResendClient).resend === 'function'
        ? (api as ResendClient)
        : createApiClient(api as ApiClientOptions),
    webhook: options.webhook,
    context: options.context,
    store,
    calls: new BoundedWatchStore(store, duration('storeTimeoutMs', options.storeTimeoutMs, 2_000)),
    deadlineMs: duration('deadlineMs', options.deadlineMs, 900_000, 0),
    retryAfterMs: duration('retryAfterMs', options.retryAfterMs, 900_000),
    maxTries: positiveInteger('maxTries', options.maxTries, 3),
    unreachableAfterMs: duration('unreachableAfterMs', options.unreachableAfterMs, 86_400_000, 0),
    batchSize: positiveInteger('batchSize', options.batchSize, 100),
    requestsPerSecond: positive('requestsPerSecond', options.requestsPerSecond, 5),
    resendTimeoutMs: duration('resendTimeoutMs', options.resendTimeoutMs, 30_000),
    onOverdue: optionalFunction('onOverdue', options.onOverdue),
    onUnreachable: optionalFunction('onUnreachable', options.onUnreachable),
    logger: options.logger === undefined ? console : options.logger,
    now: optionalFunction('now', options.now) ?? Date.now,
  };
}
