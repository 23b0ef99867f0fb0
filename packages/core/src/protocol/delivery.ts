import type { DeliveryMessage } from '../diagnostics/messages.js';
import type { Notification } from '../notification/types.js';

/**
 * One verified notification on its way through the protocol, and what its caller knows about it: what `handle`
 * hands to the processor or the queue, and `process` to the processor.
 */
export interface Received<C> {
  readonly notification: Notification;
  /** The framework's request; `undefined` where there is none (`process`, and `fetch` called without one). */
  readonly context: C | undefined;
  /** The position of the secret its signature matched; -1 when it was not verified (`process` without one). */
  readonly secretIndex: number;
  readonly secretId: string | undefined;
  /** The `payhook:delivery` message being traced, when anyone listens. */
  readonly traced?: DeliveryMessage;
  /** Where the caller's signal is (a queue worker's `process` options): its abort aborts the handlers' `delivery.signal`. */
  readonly caller?: Caller;
}

/**
 * Holds the caller's signal, read only once a handler reads `delivery.signal` or the run is aborted, so a getter can
 * make it then: a queue worker's attempt does, and most runs never make one (on Node.js 20 each `AbortSignal` made
 * outlives young collections until a full one, nodejs/node#55328).
 */
export interface Caller {
  readonly signal?: AbortSignal;
}

/** Facts about one delivery that the application handler may want. */
export interface Delivery {
  /** The duplicate-detection key as stored (see `boundKey`); `undefined` when the notification is not deduplicated. */
  readonly key: string | undefined;
  /**
   * The position of the matching secret in the configured list (0 = current; more = an old one still in use);
   * -1 for a notification handed to `process` without one (fetched from the API, not signed).
   */
  readonly secretIndex: number;
  /** The matching secret's `id`, when secrets are named. */
  readonly secretId: string | undefined;
  /** The decoded object as sent, unknown fields included. */
  readonly raw: Readonly<Record<string, unknown>>;
  /**
   * Aborted when this run may no longer be the only one: its claim could not be renewed for `leaseMs` (the store
   * was unreachable) or another copy claimed the notification, or the run was given up after ten
   * `handlerTimeoutMs`, or the caller's `signal` of `process` aborted (a queue worker handing the job back at
   * shutdown). Check it before an effect that must not happen twice; `signal.reason` says why.
   */
  readonly signal: AbortSignal;
  /** With a transactional store: its transaction (for `pg`, the client inside `BEGIN`). */
  readonly transaction?: unknown;
}

export type DeliveryFacts = Omit<Delivery, 'signal' | 'transaction'>;

/**
 * What `process` passes on to the handlers' `delivery` about how the notification was verified.
 *
 * @example
 * await webhook.process(notification, undefined, { secretIndex: 0 });
 */
export interface ProcessOptions {
  /**
   * The position of the secret its signature matched, when it was verified as a webhook; -1 (the default) when it
   * was not (a record fetched from the API).
   */
  secretIndex?: number;
  /** That secret's `id`, when secrets are named. */
  secretId?: string;
  /**
   * Aborts the handlers' `delivery.signal` when it aborts (a queue worker handing the job back at shutdown). Read
   * only when a handler reads `delivery.signal` or the run is aborted: a getter may make it then.
   */
  signal?: AbortSignal;
  /**
   * Runs only the handlers a queue worker runs: all but those registered `{ inline: true }`, which ran in the request
   * (`createWorker` passes it). `ignored` when the notification reaches none.
   * @default false
   */
  queued?: boolean;
  /**
   * Takes the notification as a delivery would: with the webhook's `queue`, inline handlers here and the rest
   * queued (the answer `queued` or `handled+queued`). Ignored with `queued: true` or without a `queue`.
   * @default false
   */
  enqueue?: boolean;
}

/** Runs inside the transaction of a transactional store, after the handlers: the queued part's job (the outbox). */
export type Within = (transaction: unknown) => Promise<unknown>;
