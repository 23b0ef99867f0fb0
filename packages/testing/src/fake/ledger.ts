import type { OperationRecord, PaymentRecord, SplitSumRule } from '@payhook/payments';
import type { FakeClock } from './clock.js';
import { FakeServiceError } from './errors.js';
import type { IdSource } from './ids.js';
import type { Outbox } from './outbox.js';
import type { PaymentOutcome } from './outcomes.js';
import type { FakeProject } from './projects.js';
import { receiptUrl, webhookFields } from './records.js';
import type { FakeSubscription } from './subscriptions.js';
import type { FakeCharge } from './types.js';

/** One payment as the fake keeps it: its record as it stands, its operations and charges, what is left. */
export interface PaymentState {
  readonly project: FakeProject;
  readonly record: PaymentRecord;
  readonly checkoutId: string;
  /** Chosen at creation; a hosted payment's is chosen again when the customer enters a card or a wallet. */
  outcome: PaymentOutcome;
  readonly subscriptionId: string | undefined;
  readonly serverUrl: string | undefined;
  readonly charges: FakeCharge[];
  readonly operations: OperationRecord[];
  capturedMinor: number;
  refundedMinor: number;
  voided: boolean;
  /** Fake-clock ms when an unpaid hosted payment expires (`order_timeout`), if it has one. */
  readonly expiresAt: number | undefined;
}

/** A card token the fake issued, to show its mask and expiry when a later payment uses it. */
interface IssuedToken {
  readonly mask: string;
  readonly expiration: string;
}

/** Everything the fake service knows, shared by the parts that decide payments, operations and charges. */
export interface Ledger {
  readonly baseUrl: string;
  readonly clock: FakeClock;
  readonly outbox: Outbox;
  readonly ids: IdSource;
  readonly splitSum: SplitSumRule | undefined;
  readonly strict: boolean;
  readonly refundWebhookCode: '1000' | '1004';
  readonly projects: Map<string, FakeProject>;
  readonly payments: Map<string, PaymentState>;
  /** Payment id by `ownerKey(pos_id, order_id)`. */
  readonly byOrder: Map<string, string>;
  /** Payment id by checkout id. */
  readonly byCheckout: Map<string, string>;
  readonly subscriptions: Map<string, FakeSubscription>;
  readonly tokens: Map<string, IssuedToken>;
  /** What each receipt token shows. */
  readonly receipts: Map<string, PaymentRecord | OperationRecord>;
  readonly outcomeByOrder: Map<string, PaymentOutcome>;
  readonly outcomeByCard: Map<string, PaymentOutcome>;
}

/** The key of an order: order ids are unique per project. */
export function ownerKey(posId: string, orderId: string): string {
  return `${posId}\u0000${orderId}`;
}

/** @throws {FakeServiceError} `N-404` when there is no such payment. */
export function paymentState(ledger: Ledger, paymentId: string | undefined): PaymentState {
  const state = paymentId === undefined ? undefined : ledger.payments.get(paymentId);
  if (!state) throw new FakeServiceError('N-404', 404, 'No such payment.');
  return state;
}

/** @throws {FakeServiceError} `N-404` when there is no such subscription. */
export function subscriptionOf(ledger: Ledger, subscriptionId: string): FakeSubscription {
  const subscription = ledger.subscriptions.get(subscriptionId);
  if (!subscription) throw new FakeServiceError('N-404', 404, 'No such subscription.');
  return subscription;
}

/** A copy of a payment's record (or charge) with its subscription's current status. */
export function viewOf(ledger: Ledger, state: PaymentState, record: PaymentRecord): PaymentRecord {
  const view = structuredClone(record);
  if (state.subscriptionId !== undefined) {
    view.recurring = {
      id: state.subscriptionId,
      status: subscriptionOf(ledger, state.subscriptionId).status,
    };
  }
  return view;
}

/**
 * Queues the webhook of a record: to `serverUrl` when an operation's request named one, to the plan's
 * `notification_url` for a charge, else to the payment's `server_url`.
 */
export function sendWebhook(
  ledger: Ledger,
  state: PaymentState,
  notification: PaymentRecord | OperationRecord,
  charge: boolean,
  serverUrl?: string,
): void {
  const plan =
    state.subscriptionId === undefined ? undefined : subscriptionOf(ledger, state.subscriptionId).plan;
  const url = serverUrl ?? (charge ? plan?.notification_url : undefined) ?? state.serverUrl;
  if (typeof url === 'string') ledger.outbox.enqueue(url, webhookFields(notification), state.project.secret);
}

/** Sends the webhook of the payment's record as it stands. */
export function notifyPayment(ledger: Ledger, state: PaymentState): void {
  sendWebhook(ledger, state, viewOf(ledger, state, state.record), false);
}

/** Gives `record` a `receipt_url` (spec 2.1's form) that the receipt page answers. */
export function issueReceipt(ledger: Ledger, record: PaymentRecord | OperationRecord): void {
  const url = receiptUrl(ledger.baseUrl, ledger.ids);
  ledger.receipts.set(url.slice(url.lastIndexOf('/') + 1), record);
  record.receipt_url = url;
}
