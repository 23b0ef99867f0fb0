import type { SignatureHint, WebhookErrorCode } from '../errors.js';
import type { WebhookOutcome } from '../http/answers.js';
import type { DriftFinding } from '../notification/drift.js';

/**
 * The `node:diagnostics_channel` names payhook publishes on: three `TracingChannel`s (subscribe with
 * `diagnostics_channel.tracingChannel(name).subscribe({ start, end, asyncStart, asyncEnd, error })`) and four
 * plain channels. Nothing is built or published while a channel has no subscriber.
 *
 * @example
 * import diagnostics_channel from 'node:diagnostics_channel';
 * diagnostics_channel.subscribe(PAYHOOK_CHANNELS.refusal, (message) => refusals.add(1, { code: message.code }));
 */
export const PAYHOOK_CHANNELS = {
  /** Tracing: one delivery (a request to the handler, or a call of `process`), from its start to its answer. */
  delivery: 'payhook:delivery',
  /** Tracing: one run of one application handler. */
  handler: 'payhook:handler',
  /** Tracing: one call of a duplicate store's method (claim, renew, commit, release, forget, transaction). */
  store: 'payhook:store',
  /** Plain: one refusal, with its code and status. */
  refusal: 'payhook:refusal',
  /** Plain: a verified delivery that carried what payhook does not type (new fields, statuses, types). */
  drift: 'payhook:drift',
  /** Plain: a payment the payment watch reported overdue (`createPaymentWatch`). */
  watch: 'payhook:watch',
  /** Plain: a notification the `ledger` recorded as stale or as a conflict (no handler ran). */
  ledger: 'payhook:ledger',
} as const;

/**
 * The context of the `payhook:delivery` tracing channel: filled in as the delivery goes, complete at `asyncEnd`.
 * It never holds the notification, a secret, the signature or a payload field: only the duplicate key (made of
 * ids, method and status) and the secret's position and `id`.
 *
 * @example
 * tracingChannel(PAYHOOK_CHANNELS.delivery).subscribe({ asyncEnd: (m) => log((m as DeliveryMessage).outcome) });
 */
export interface DeliveryMessage {
  /** `request`: an HTTP delivery to the handler; `process`: a call of `webhook.process`. */
  readonly via: 'request' | 'process';
  /** `method.status` of the notification (`purchase.success`), once it is verified and parsed. */
  event: string | undefined;
  /** How it ended, at `asyncEnd`. */
  outcome: WebhookOutcome | undefined;
  /** The duplicate key as stored; `undefined` before parsing and when the notification is not deduplicated. */
  key: string | undefined;
  /** The position of the secret its signature matched; -1 when none was (a refusal, or `process` without one). */
  secretIndex: number;
  /** That secret's `id`, when secrets are named. */
  secretId: string | undefined;
  /** How many application handlers the notification reaches (0 when ignored or refused before routing). */
  handlerCount: number;
  /** The refusal's code, when refused. */
  errorCode: WebhookErrorCode | undefined;
  /** What most likely made its signature fail, when refused for it and payhook can tell (docs/errors.md). */
  hint: SignatureHint | undefined;
  /** The HTTP status answered (for `process`: the status the same outcome answers as a delivery). */
  status: number | undefined;
}

/**
 * The context of the `payhook:handler` tracing channel: one application handler's run.
 *
 * @example
 * tracingChannel(PAYHOOK_CHANNELS.handler).subscribe({ start: (m) => log((m as HandlerRunMessage).handler) });
 */
export interface HandlerRunMessage {
  /** The handler's id (`purchase.success#fulfil`, `*#audit`): its event and its function's name or position. */
  readonly handler: string;
  /** The notification's duplicate key. */
  readonly key: string | undefined;
  /** The delivery it runs for; `undefined` where the runtime has no `AsyncLocalStorage`. */
  readonly delivery: DeliveryMessage | undefined;
  /** `handler.failed` when it threw; what it threw is never published (it may hold anything). */
  errorCode: WebhookErrorCode | undefined;
  /** True at `end` when the handler returned without a promise: no `asyncStart` / `asyncEnd` follow. */
  settled: boolean;
}

/**
 * The context of the `payhook:store` tracing channel: one call of a duplicate store's method, from the call until
 * its result settles (a store that never answers leaves it open: the delivery answers `store.unavailable`).
 *
 * @example
 * tracingChannel(PAYHOOK_CHANNELS.store).subscribe({ error: (m) => alert((m as StoreCallMessage).store) });
 */
export interface StoreCallMessage {
  /** Which method: `claim`, `renew`, `commit`, `release`, `forget`, or a transactional store's `transaction`. */
  readonly step: StoreStep;
  /** The store's `name`. */
  readonly store: string;
  /** The delivery it serves; `undefined` for renewals (they run on a timer, for every run at once). */
  readonly delivery: DeliveryMessage | undefined;
  /** `store.unavailable` when the call threw or rejected; the store's error is never published. */
  errorCode: WebhookErrorCode | undefined;
  /** True at `end` when the store answered without a promise: no `asyncStart` / `asyncEnd` follow. */
  settled: boolean;
}

/**
 * A message of the `payhook:refusal` channel.
 *
 * @example
 * subscribe(PAYHOOK_CHANNELS.refusal, (m) => counter.add(1, { code: (m as RefusalMessage).code }));
 */
export interface RefusalMessage {
  /** `request`: an HTTP delivery was answered with the refusal; `process`: `webhook.process` threw it. */
  readonly via: 'request' | 'process';
  /** The error code (docs/errors.md). */
  readonly code: WebhookErrorCode;
  /** The HTTP status it answers. */
  readonly status: number;
}

/**
 * A message of the `payhook:drift` channel: one per verified delivery that carried something payhook does not
 * type, with what it was. Names only (`findDrift`): never a field's value.
 *
 * @example
 * subscribe(PAYHOOK_CHANNELS.drift, (m) => { for (const f of (m as DriftMessage).findings) seen.add(f.kind, f.name); });
 */
export interface DriftMessage {
  /** `method.status` of the notification, as sent (`purchase.success`, `purchase.rejected`). */
  readonly event: string;
  /** What it carried beyond payhook's types, in the order of its fields, then method, status and status code. */
  readonly findings: readonly DriftFinding[];
}

/**
 * A message of the `payhook:watch` channel: one per payment the watch reported overdue (still unsettled after its
 * tries, an order the service does not know, or one its API could not be asked about for `unreachableAfterMs`). No
 * order id: a metric's attributes stay few.
 *
 * @example
 * subscribe(PAYHOOK_CHANNELS.watch, (m) => overdue.add(1, { reason: (m as WatchMessage).reason }));
 */
export interface WatchMessage {
  readonly reason: 'unsettled' | 'unknown_order' | 'api_unreachable';
  /** The payment's operation (`purchase`, `auth`). */
  readonly operation: string;
  /** How many runs asked the service about it. */
  readonly tries: number;
}

/**
 * A message of the `payhook:ledger` channel: one per notification the handler's `ledger` recorded without running
 * its handlers, earlier in its payment's cycle than the state (`stale`) or contradicting it (`conflict`: a failure
 * after a success, refunds above the amount paid). No order id: a metric's attributes stay few.
 *
 * @example
 * subscribe(PAYHOOK_CHANNELS.ledger, (m) => decisions.add(1, { outcome: (m as LedgerMessage).outcome }));
 */
export interface LedgerMessage {
  readonly outcome: 'stale' | 'conflict';
  /** The notification's `method` (`purchase`, `refund`). */
  readonly method: string;
}

/**
 * A call to the duplicate store, by the method it calls: what a failure means for the notification depends on it.
 *
 * @example
 * const step: StoreStep = 'claim';
 */
export type StoreStep = 'claim' | 'renew' | 'commit' | 'release' | 'forget' | 'transaction';
