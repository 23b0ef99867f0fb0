import type { PaymentRecord } from '@payhook/core/validation';
import { formatTimestamp } from './calendar.js';
import { FakeServiceError } from './errors.js';
import { type Ledger, notifyPayment, type PaymentState, paymentState, viewOf } from './ledger.js';
import { STATUS } from './outcomes.js';
import { setStatusOfSubscription, settlePayment } from './payments.js';
import type { CheckoutAction } from './types.js';

function isOpen(state: PaymentState): boolean {
  return state.record.status === 'init' || state.record.status === 'pending';
}

function isExpired(state: PaymentState): boolean {
  return state.record.status_code === STATUS.expired.status_code;
}

/** The payment behind a checkout (hosted form or 3DS page), for the pages. */
export function checkoutOf(
  ledger: Ledger,
  checkoutId: string,
): { record: PaymentRecord; open: boolean; threeDs: boolean; expired: boolean } {
  const state = paymentState(ledger, ledger.byCheckout.get(checkoutId));
  return {
    record: viewOf(ledger, state, state.record),
    open: isOpen(state),
    threeDs: state.record.status === 'pending',
    expired: isExpired(state),
  };
}

/**
 * The customer's choice on the checkout form or the 3DS page: settles the payment, sends its webhook, and
 * answers where to send the customer (`result_url`, when the request had one).
 * @throws {FakeServiceError} `N-404` (404) unknown checkout, `C-409` (409) a checkout already completed,
 * `C-410` (410) a hosted payment past its `order_timeout`.
 */
export function completeCheckout(
  ledger: Ledger,
  checkoutId: string,
  action: CheckoutAction,
): { record: PaymentRecord; redirectTo?: string } {
  const state = paymentState(ledger, ledger.byCheckout.get(checkoutId));
  if (isExpired(state)) {
    throw new FakeServiceError('C-410', 410, 'This checkout expired: its order_timeout has passed.');
  }
  if (!isOpen(state)) throw new FakeServiceError('C-409', 409, 'This checkout is already completed.');
  settlePayment(ledger, state, action, state.record.status === 'pending');
  const result = state.record.result_url;
  return {
    record: viewOf(ledger, state, state.record),
    ...(typeof result === 'string' ? { redirectTo: result } : {}),
  };
}

/** The fake-clock time (ms) the next unpaid hosted payment expires, if one will. */
export function nextExpiry(ledger: Ledger): number | undefined {
  let earliest: number | undefined;
  for (const state of ledger.payments.values()) {
    const { expiresAt } = state;
    if (expiresAt !== undefined && isOpen(state) && (earliest === undefined || expiresAt < earliest))
      earliest = expiresAt;
  }
  return earliest;
}

/** Unpaid hosted payments past `order_timeout` fail with their own code and webhook (docs/assumptions.md). */
export async function expirePayments(ledger: Ledger, now: number): Promise<void> {
  for (const state of ledger.payments.values()) {
    if (state.expiresAt === undefined || state.expiresAt > now || !isOpen(state)) continue;
    const { record } = state;
    Object.assign(record, STATUS.expired, {
      processed_at: formatTimestamp(new Date(state.expiresAt)),
      user_action_required: false,
    });
    delete record.user_action_url;
    setStatusOfSubscription(ledger, state, 'canceled', new Date(state.expiresAt));
    notifyPayment(ledger, state);
  }
  await ledger.outbox.idle();
}
