import { validateCard } from '@payhook/payments';
import { formatTimestamp } from './calendar.js';
import { FakeServiceError, type FakeViolation } from './errors.js';
import { type Ledger, notifyPayment, type PaymentState, paymentState, viewOf } from './ledger.js';
import { chooseOutcome, STATUS, TEST_CARDS, THREE_DS_CODE } from './outcomes.js';
import { applyOutcome, cardFields, setStatusOfSubscription, settlePayment, threeDsUrl } from './payments.js';
import type { CheckoutAction, CheckoutCard, CheckoutStep, CheckoutView, Wallet } from './types.js';

function isOpen(state: PaymentState): boolean {
  return state.record.status === 'init' || state.record.status === 'pending';
}

function isExpired(state: PaymentState): boolean {
  return state.record.status_code === STATUS.expired.status_code;
}

/** The payment behind a checkout (hosted form or 3DS page), for the pages. */
export function checkoutOf(ledger: Ledger, checkoutId: string): CheckoutView {
  const state = paymentState(ledger, ledger.byCheckout.get(checkoutId));
  return {
    record: viewOf(ledger, state, state.record),
    merchantName: state.project.merchantName,
    open: isOpen(state),
    threeDs: state.record.status === 'pending',
    expired: isExpired(state),
    ...(state.expiresAt === undefined ? {} : { expiresAt: new Date(state.expiresAt) }),
  };
}

/** @throws {FakeServiceError} `N-404`, `C-410` past `order_timeout`, `C-409` completed or not at `step`. */
function openCheckout(ledger: Ledger, checkoutId: string, step?: 'card' | '3ds'): PaymentState {
  const state = paymentState(ledger, ledger.byCheckout.get(checkoutId));
  if (isExpired(state)) {
    throw new FakeServiceError('C-410', 410, 'This checkout expired: its order_timeout has passed.');
  }
  if (!isOpen(state)) throw new FakeServiceError('C-409', 409, 'This checkout is already completed.');
  if (step === 'card' && state.record.status !== 'init') {
    throw new FakeServiceError('C-409', 409, 'This payment waits for its 3-D Secure code, not a card.');
  }
  if (step === '3ds' && state.record.status !== 'pending') {
    throw new FakeServiceError('C-409', 409, 'This payment has no 3-D Secure step waiting: enter a card.');
  }
  return state;
}

function nextStep(ledger: Ledger, state: PaymentState): CheckoutStep {
  const record = viewOf(ledger, state, state.record);
  if (state.record.status === 'pending') return { record, redirectTo: threeDsUrl(ledger, state.checkoutId) };
  const result = state.record.result_url;
  return { record, ...(typeof result === 'string' ? { redirectTo: result } : {}) };
}

/**
 * The shortcut past the pages' fields: settles the payment as `action` says, sends its webhook, and answers
 * where to send the customer (`result_url`, when the request had one).
 * @throws {FakeServiceError} `N-404` (404) unknown checkout, `C-409` (409) a checkout already completed,
 * `C-410` (410) a hosted payment past its `order_timeout`.
 */
export function completeCheckout(ledger: Ledger, checkoutId: string, action: CheckoutAction): CheckoutStep {
  const state = openCheckout(ledger, checkoutId);
  settlePayment(ledger, state, action, state.record.status === 'pending');
  return nextStep(ledger, state);
}

/** The card's violations: core's card checks (spec part 1) on the fake clock, and a cardholder name. */
function cardViolations(ledger: Ledger, card: CheckoutCard): FakeViolation[] {
  const request = {
    cc_number: card.number.replace(/[\s-]/g, ''),
    exp_month: card.expMonth,
    exp_year: card.expYear,
    card_cvv: card.cvv,
  };
  const violations = [...validateCard(request, { now: ledger.clock.now() }).violations];
  if (card.holder.trim() === '') {
    violations.push({ field: 'cardholder', code: 'required', message: 'cardholder is required.' });
  }
  return violations;
}

/**
 * The hosted checkout's card form: checks the card again (never trusting the page), then the card decides the
 * outcome as in a direct request (`TEST_CARDS`, `setOutcome`): paid or declined with its webhook, or paused for
 * 3-D Secure (the next step is the 3DS page).
 * @throws {FakeServiceError} `V-400` (400) with the card's violations, and as `completeCheckout`.
 */
export function payByCard(ledger: Ledger, checkoutId: string, card: CheckoutCard): CheckoutStep {
  const state = openCheckout(ledger, checkoutId, 'card');
  const violations = cardViolations(ledger, card);
  if (violations.length > 0) {
    throw new FakeServiceError('V-400', 400, 'The card was refused: see violations.', violations);
  }
  const number = card.number.replace(/[\s-]/g, '');
  Object.assign(
    state.record,
    cardFields(ledger, { cc_number: number, exp_month: card.expMonth, exp_year: card.expYear }),
  );
  state.outcome = chooseOutcome(state.record.order_id, number, ledger.outcomeByOrder, ledger.outcomeByCard);
  applyOutcome(ledger, state);
  return nextStep(ledger, state);
}

/**
 * A wallet button of the hosted checkout: the wallet pays (`payway` names it, a `cc_token` is issued) unless
 * `setOutcome` chose otherwise for the order.
 * @throws {FakeServiceError} as `completeCheckout`.
 */
export function payByWallet(ledger: Ledger, checkoutId: string, wallet: Wallet): CheckoutStep {
  const state = openCheckout(ledger, checkoutId, 'card');
  const expires = ledger.clock.now().getUTCFullYear() + 3;
  Object.assign(
    state.record,
    { payway: wallet },
    cardFields(ledger, { cc_number: TEST_CARDS.success, exp_month: 12, exp_year: expires }),
  );
  state.outcome = chooseOutcome(state.record.order_id, undefined, ledger.outcomeByOrder, new Map());
  applyOutcome(ledger, state);
  return nextStep(ledger, state);
}

/**
 * The 3DS page's code: `THREE_DS_CODE` pays, any other code fails the payment (`2123`); either way its webhook.
 * @throws {FakeServiceError} `C-409` when no 3-D Secure step waits, and as `completeCheckout`.
 */
export function confirmThreeDs(ledger: Ledger, checkoutId: string, code: string): CheckoutStep {
  const state = openCheckout(ledger, checkoutId, '3ds');
  settlePayment(ledger, state, code.trim() === THREE_DS_CODE ? 'pay' : 'fail_3ds', true);
  return nextStep(ledger, state);
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
