// What the ledger answers: a payment's entry (\`get\`), a transition, a conflict. Types only.

/**
 * Where a payment stands. `new`: nothing known moved it yet (only unknown statuses, or nothing). `failed`, `voided`
 * and `refunded` are final.
 */
export type PaymentState =
  | 'new'
  | 'pending'
  | 'authorized'
  | 'paid'
  | 'failed'
  | 'voided'
  | 'partially_refunded'
  | 'refunded';

/** A subscription's charge (one `transaction_id`): a failed charge and a later successful one are two charges. */
export type ChargeState = 'new' | 'pending' | 'paid' | 'failed';

/** A subscription's own status (spec 3.2); `canceled` is final. */
export type SubscriptionStatus = 'init' | 'active' | 'canceled';

/** What moved: the payment, one charge of its subscription, or the subscription. */
export type TransitionSubject = 'payment' | 'charge' | 'subscription';

/**
 * One step of a payment's state, fired once, by the delivery whose notification caused it.
 *
 * @example
 * ledger.onTransition('paid', (t) => fulfil(t.orderId));
 */
export interface Transition {
  readonly orderId: string;
  readonly subject: TransitionSubject;
  /** The charge's `transaction_id`, for a charge. */
  readonly chargeId?: string;
  readonly from: PaymentState | ChargeState | SubscriptionStatus | 'new';
  readonly to: PaymentState | ChargeState | SubscriptionStatus;
  /** A refund this step records (`from` may equal `to`: a second partial refund), by its `operation_id`. */
  readonly refund?: { readonly operationId: string; readonly amount: number };
  /** The ledger's version once the fact was recorded: its position in the payment's log, from 1. */
  readonly version: number;
  /** The delivery that caused it: its key, method and status. */
  readonly cause: DeliveryCause;
  /** `true` for a state the notification implies without saying it (a refund before its payment's success). */
  readonly implied: boolean;
}

/** A delivery, as the ledger's history names it. */
export interface DeliveryCause {
  readonly key: string;
  readonly method: string;
  readonly status: string;
  readonly operationId?: string;
  readonly chargeId?: string;
  readonly at: number;
}

/** Why a notification was a conflict. */
export type ConflictReason =
  | 'failure_after_success'
  | 'success_after_failure'
  | 'refund_above_paid'
  | 'void_after_capture'
  | 'operation_after_void';

/**
 * A notification that contradicts what the ledger holds: recorded, the state not moved, handed to `onConflict`.
 *
 * @example
 * createPaymentLedger({ onConflict: (c) => alert(`${c.orderId}: ${c.reason}`) });
 */
export interface LedgerConflict {
  readonly orderId: string;
  readonly reason: ConflictReason;
  /** The state it would have contradicted (it stays). */
  readonly state: PaymentState;
  readonly cause: DeliveryCause;
  /** The operation to ask the service to re-send (spec 4.3), and the charge for a subscription's (4.4). */
  readonly operation: string;
  readonly chargeId?: string;
}

/** What one recorded fact came to. `news`: no state moved, but it is not earlier than the state (an unknown status). */
export interface FactDecision {
  readonly verdict: 'moved' | 'stale' | 'news' | 'conflict';
  readonly transitions: readonly Transition[];
  readonly conflict?: LedgerConflict;
}

/** A charge of a subscription, as `get` answers it. */
export interface ChargeEntry {
  readonly state: ChargeState;
  readonly amount?: number;
}

/**
 * A payment as the ledger holds it.
 *
 * @example
 * const { state, refundedAmount, version } = await ledger.get('order-1');
 */
export interface PaymentEntry {
  readonly orderId: string;
  readonly state: PaymentState;
  /** How many notifications were recorded (each delivery once): grows by one with each. */
  readonly version: number;
  readonly currency?: string;
  /** A purchase's amount, or what the captures summed to. */
  readonly paidAmount?: number;
  readonly authorizedAmount?: number;
  readonly capturedAmount: number;
  readonly refundedAmount: number;
  /** Each refund once, by its `operation_id` (a refund delivered twice counts once). */
  readonly refunds: Readonly<Record<string, number>>;
  readonly captures: Readonly<Record<string, number>>;
  /** A subscription's charges by `transaction_id`. */
  readonly charges: Readonly<Record<string, ChargeEntry>>;
  readonly subscription?: { readonly id?: string; readonly status: SubscriptionStatus };
  /** Statuses the ledger does not know, as received, each once: kept, the state not moved. */
  readonly unknownStatuses: readonly string[];
  /** Every transition, in the order it fired, with the delivery that caused it. */
  readonly history: readonly Transition[];
  readonly conflicts: readonly LedgerConflict[];
  /** Every delivery recorded, in order, with what the ledger decided. */
  readonly deliveries: readonly (DeliveryCause & { readonly verdict: FactDecision['verdict'] })[];
}
