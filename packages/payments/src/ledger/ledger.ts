import type { Delivery, Notification, WebhookLedger } from '@payhook/core';
import type { ResendClient } from '../reconcile/api-client.js';
import type { LedgerStore } from './contract.js';
import type {
  ChargeState,
  LedgerConflict,
  PaymentEntry,
  PaymentState,
  SubscriptionStatus,
  Transition,
} from './entry.js';
import { factOf, fallbackKey } from './fact.js';
import { MemoryLedgerStore } from './memory.js';
import { replay } from './transitions.js';

/** Called once per transition, by the instance whose delivery caused it, under that delivery's claim. */
export type TransitionListener = (transition: Transition, delivery: Delivery) => unknown;

/**
 * The options of `createPaymentLedger`; all optional.
 *
 * @example
 * const options: PaymentLedgerOptions = { store: new MemoryLedgerStore(), onConflict: (c) => alert(c.reason) };
 */
export interface PaymentLedgerOptions {
  /**
   * Where each payment's log is kept.
   * @default new MemoryLedgerStore()
   */
  store?: LedgerStore;
  /**
   * Called once per conflicting notification (a failure after a success, refunds above the amount paid), under its
   * claim; the state did not move. A throw fails the delivery (500), so it is redelivered and called again.
   */
  onConflict?: (conflict: LedgerConflict, delivery: Delivery) => unknown;
  /**
   * With a client (`createApiClient`), a conflict asks the service to re-send the payment's webhook (spec 4.3; a
   * subscription's charge by its `transaction_id`, 4.4): handled like any delivery, it confirms the state or settles
   * it. A failed re-send is logged, never fails the delivery.
   */
  client?: ResendClient;
  /**
   * Where a failed re-send is told; `false` for nowhere.
   * @default console
   */
  logger?: Pick<Console, 'warn'> | false;
  /** @default Date.now */
  now?: () => number;
}

/**
 * A ledger per payment, for `createWebhookHandler({ ledger })`: what each payment is, moved only forward.
 *
 * @example
 * const ledger = createPaymentLedger();
 * ledger.onTransition('paid', (t) => fulfil(t.orderId));
 * const webhook = createWebhookHandler({ secret, ledger });
 * const { state, refundedAmount } = await ledger.get('order-1');
 */
export interface PaymentLedger extends WebhookLedger {
  /** The payment as recorded, `undefined` when nothing was recorded for it. */
  get(orderId: string): Promise<PaymentEntry | undefined>;
  /** Calls `listener` for every transition; answers the function that stops it. */
  onTransition(listener: TransitionListener): () => void;
  /** Calls `listener` for every transition to `to` (a payment's, a charge's or a subscription's state). */
  onTransition(to: PaymentState | ChargeState | SubscriptionStatus, listener: TransitionListener): () => void;
}

/**
 * Creates the payment ledger: each notification is recorded in its payment's log (by `order_id`) once its delivery
 * holds its claim, and the payment's state moves only forward (docs/assumptions.md has the table). A notification
 * earlier than the state is answered 200 `stale`; one contradicting it 200 `conflict` (`onConflict`, and a re-send
 * asked with `client`); neither reaches a handler. Each transition fires `onTransition` once, on the instance whose
 * delivery caused it, in causal order (a refund before its payment's success fires `paid` first).
 *
 * @example
 * const ledger = createPaymentLedger({ store: new RedisLedgerStore({ client: redis }), client: api });
 * ledger.onTransition('refunded', (t) => closeOrder(t.orderId));
 * const webhook = createWebhookHandler({ secret, store: new RedisStore({ client: redis }), ledger });
 */
export function createPaymentLedger(options: PaymentLedgerOptions = {}): PaymentLedger {
  const store = options.store ?? new MemoryLedgerStore();
  if (typeof store?.append !== 'function' || typeof store.read !== 'function') {
    throw new TypeError(
      '[@payhook/payments] createPaymentLedger: store must be a LedgerStore (append and read).',
    );
  }
  const now = options.now ?? Date.now;
  const listeners = new Set<Listening>();
  const settle = settler(options);
  return {
    name: store.name,
    async record(notification: Notification, delivery: Delivery) {
      const key = delivery.key ?? fallbackKey(notification);
      const orderId = notification.order_id;
      const { log, at } = await store.append(orderId, factOf(notification, key, now()), delivery.transaction);
      const { verdict, transitions, conflict } = replay(orderId, log.slice(0, at + 1)).decisions[at]!;
      if (conflict !== undefined) return { outcome: 'conflict', after: (d: Delivery) => settle(conflict, d) };
      if (verdict === 'stale') return { outcome: 'stale' };
      return { outcome: 'handle', after: (d: Delivery) => fire(listeners, transitions, d) };
    },
    async get(orderId) {
      const log = await store.read(orderId);
      return log.length === 0 ? undefined : replay(orderId, log).entry;
    },
    onTransition(toOrListener: TransitionTarget | TransitionListener, listener?: TransitionListener) {
      const entry: Listening =
        typeof toOrListener === 'function'
          ? { to: undefined, listener: toOrListener }
          : { to: toOrListener, listener: listener! };
      if (typeof entry.listener !== 'function') {
        throw new TypeError('[@payhook/payments] onTransition needs a listener function.');
      }
      listeners.add(entry);
      return () => void listeners.delete(entry);
    },
  };
}

type TransitionTarget = PaymentState | ChargeState | SubscriptionStatus;

interface Listening {
  readonly to: TransitionTarget | undefined;
  readonly listener: TransitionListener;
}

/** A delivery's transitions, in causal order, each to every listener of its target (in the order they were added). */
async function fire(
  listeners: ReadonlySet<Listening>,
  transitions: readonly Transition[],
  delivery: Delivery,
): Promise<void> {
  for (const transition of transitions) {
    for (const { to, listener } of [...listeners]) {
      if (to === undefined || to === transition.to) await listener(transition, delivery);
    }
  }
}

/** A conflict to `onConflict`, then, with a client, a re-send asked of the service (a failure only logged). */
function settler(options: PaymentLedgerOptions) {
  const logger = options.logger === undefined ? console : options.logger;
  return async (conflict: LedgerConflict, delivery: Delivery): Promise<void> => {
    await options.onConflict?.(conflict, delivery);
    if (options.client === undefined) return;
    try {
      await options.client.resend({
        orderId: conflict.orderId,
        operation: conflict.operation,
        ...(conflict.chargeId === undefined ? {} : { transactionId: conflict.chargeId }),
      });
    } catch (error) {
      if (logger) {
        logger.warn(
          `[@payhook/payments] the ledger could not ask the service to re-send ${conflict.operation} of a conflicting payment (${conflict.reason}): ${(error as Error)?.message}`,
        );
      }
    }
  };
}
