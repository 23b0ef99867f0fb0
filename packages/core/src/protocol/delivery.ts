import type { DeliveryMessage } from '../diagnostics/messages.js';
import type { Notification } from '../notification/types.js';

/**
 * One verified notification on its way through the protocol, and what its caller knows about it: what `handle`
 * hands to the processor or the queue, and `process` to the processor.
 */
export interface Received<C> {
  readonly notification: Notification;
  readonly context: C;
  /** The position of the secret its signature matched; -1 when it was not verified (`process` without one). */
  readonly secretIndex: number;
  readonly secretId: string | undefined;
  /** The `payhook:delivery` message being traced, when anyone listens. */
  readonly traced?: DeliveryMessage;
  /** The caller's signal (a queue worker's): its abort aborts the handlers' `delivery.signal`. */
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

export function factsOf(received: Received<unknown>, key: string | undefined): DeliveryFacts {
  const { secretIndex, secretId, notification } = received;
  return { key, secretIndex, secretId, raw: notification.raw };
}

/**
 * What a handler of a run is told: the delivery facts, the run's signal (made when first read), its transaction.
 * A class, not an object literal with a getter: V8 keeps it a fast object on the hot path.
 */
class RunDelivery implements Delivery {
  readonly key: string | undefined;
  readonly secretIndex: number;
  readonly secretId: string | undefined;
  readonly raw: Readonly<Record<string, unknown>>;
  readonly transaction: unknown;
  readonly #run: { readonly signal: AbortSignal };

  constructor(facts: DeliveryFacts, run: { readonly signal: AbortSignal }, transaction: unknown) {
    this.key = facts.key;
    this.secretIndex = facts.secretIndex;
    this.secretId = facts.secretId;
    this.raw = facts.raw;
    this.transaction = transaction;
    this.#run = run;
  }

  get signal(): AbortSignal {
    return this.#run.signal;
  }
}

export function deliveryFor(
  facts: DeliveryFacts,
  run: { readonly signal: AbortSignal },
  transaction?: unknown,
): Delivery {
  return new RunDelivery(facts, run, transaction);
}
