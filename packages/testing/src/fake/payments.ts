import type { RecurringInfo } from '@payhook/core';
import type { PaymentRecord } from '@payhook/payments';
import { formatTimestamp } from './calendar.js';
import { credentialsError, FakeServiceError } from './errors.js';
import {
  issueReceipt,
  type Ledger,
  notifyPayment,
  ownerKey,
  type PaymentState,
  subscriptionOf,
  viewOf,
} from './ledger.js';
import { chooseOutcome, STATUS } from './outcomes.js';
import { type CardFields, limitInfo, maskCard, newPaymentRecord } from './records.js';
import { scheduleAnchor, setSubscriptionStatus } from './subscriptions.js';
import type { CheckoutAction, CreatedPayment } from './types.js';
import { planFor, type ValidRequest, validRequest } from './validation.js';

/** The hosted checkout page of a payment. */
export function checkoutUrl(ledger: Ledger, checkoutId: string): string {
  return `${ledger.baseUrl}/api/v1/checkout/${checkoutId}/form`;
}

/** The 3-D Secure page of a payment (`user_action_url`). */
export function threeDsUrl(ledger: Ledger, checkoutId: string): string {
  return `${ledger.baseUrl}/api/v1/checkout/${checkoutId}/3ds`;
}

/**
 * What the record shows of the card: a card number gets a token issued (living to the end of its expiry month);
 * a token the fake issued shows that card's mask again.
 */
export function cardFields(
  ledger: Ledger,
  request: Pick<ValidRequest, 'cc_number' | 'exp_month' | 'exp_year' | 'cc_token'>,
): CardFields {
  if (typeof request.cc_number === 'string') {
    const token = `tok_${ledger.ids.hex(16)}`;
    const year = Number(request.exp_year);
    const fullYear = year < 100 ? 2000 + year : year;
    const expiration = formatTimestamp(
      new Date(Date.UTC(fullYear, Number(request.exp_month), 0, 23, 59, 59)),
    );
    const mask = maskCard(request.cc_number);
    ledger.tokens.set(token, { mask, expiration });
    return { cc_mask: mask, cc_token: token, cc_token_expiration: expiration };
  }
  if (typeof request.cc_token !== 'string') return {};
  const known =
    ledger.tokens.get(request.cc_token) ?? ledger.tokens.get(request.cc_token.replace(/^rcr:/, ''));
  return {
    cc_token: request.cc_token,
    ...(known ? { cc_mask: known.mask, cc_token_expiration: known.expiration } : {}),
  };
}

/** Creates the subscription an `init_recurring` asks for, in status `init` until the payment succeeds. */
function subscribe(
  ledger: Ledger,
  request: ValidRequest,
  paymentId: string,
  now: Date,
): RecurringInfo | undefined {
  if (request.init_recurring === undefined) return undefined;
  const id = ledger.ids.uuid();
  const plan = planFor(request.init_recurring, { amount: request.amount, createdAt: now });
  ledger.subscriptions.set(id, {
    id,
    paymentId,
    plan,
    status: 'init',
    ...scheduleAnchor(plan, now),
    nextIndex: 0,
    retry: undefined,
    outcomes: [],
  });
  return { id, status: 'init' };
}

/**
 * Creates a payment (or a split payment) as `POST /api/v1/payment` (`/split/purchase`) would: core's validators,
 * a unique order_id per project, then the outcome's webhooks.
 * @throws {FakeServiceError} `S-404` (401) unknown or foreign pos_id, `V-400` (400) violations, `P-409` (409) a repeated order.
 */
export function createPayment(
  ledger: Ledger,
  input: Readonly<Record<string, unknown>>,
  options?: { split?: boolean; posId?: string },
): CreatedPayment {
  const posId = options?.posId ?? input.pos_id;
  const project = typeof posId === 'string' ? ledger.projects.get(posId) : undefined;
  if (!project || (typeof input.pos_id === 'string' && input.pos_id !== project.posId))
    throw credentialsError();
  const now = ledger.clock.now();
  const split = options?.split ?? false;
  const body = validRequest(input, {
    split,
    sector: project.sector,
    now,
    splitSum: ledger.splitSum,
    strict: ledger.strict,
  });
  const key = ownerKey(project.posId, body.order_id);
  if (ledger.byOrder.has(key)) {
    throw new FakeServiceError('P-409', 409, 'A payment with this order_id already exists for this project.');
  }
  const { state, recurring } = newPayment(ledger, project, body, split, now);
  const { record, checkoutId } = state;
  ledger.payments.set(record.payment_id, state);
  ledger.byOrder.set(key, record.payment_id);
  ledger.byCheckout.set(checkoutId, record.payment_id);

  if (body.mode === 'hosted') {
    return { mode: 'hosted', location: checkoutUrl(ledger, checkoutId), paymentId: record.payment_id };
  }
  applyOutcome(ledger, state);
  const view = viewOf(ledger, state, record);
  // The creating response shows the subscription as created (`init`, spec 4.5), whatever its webhook says.
  if (recurring) view.recurring = { ...recurring };
  return { mode: 'direct', record: view };
}

/** A new payment's state (status `created`) and the subscription an `init_recurring` created, as the response shows it. */
function newPayment(
  ledger: Ledger,
  project: PaymentState['project'],
  body: ValidRequest,
  split: boolean,
  now: Date,
): { state: PaymentState; recurring: RecurringInfo | undefined } {
  const base = newPaymentRecord({ request: body, posId: project.posId, split, ids: ledger.ids, now });
  const card = cardFields(ledger, body);
  const checkoutId = ledger.ids.uuid();
  const recurring = subscribe(ledger, body, base.payment_id, now);
  const record: PaymentRecord = {
    ...base,
    ...card,
    ...(recurring ? { recurring: { ...recurring } } : {}),
    ...STATUS.created,
  };
  const cardNumber = typeof body.cc_number === 'string' ? body.cc_number : undefined;
  const state: PaymentState = {
    project,
    record,
    checkoutId,
    outcome: chooseOutcome(body.order_id, cardNumber, ledger.outcomeByOrder, ledger.outcomeByCard),
    subscriptionId: recurring?.id,
    serverUrl: typeof body.server_url === 'string' ? body.server_url : undefined,
    charges: [],
    operations: [],
    capturedMinor: 0,
    refundedMinor: 0,
    voided: false,
    expiresAt:
      body.mode === 'hosted' && typeof body.order_timeout === 'number'
        ? now.getTime() + body.order_timeout * 1000
        : undefined,
  };
  return { state, recurring };
}

/**
 * Applies the payment's outcome once its card is known: `3ds` pauses it (`pending` 2122 with `user_action_url`,
 * and its webhook), any other outcome settles it.
 */
export function applyOutcome(ledger: Ledger, state: PaymentState): void {
  if (state.outcome === '3ds') {
    Object.assign(state.record, STATUS.pending3ds, {
      user_action_required: true,
      user_action_url: threeDsUrl(ledger, state.checkoutId),
    });
    notifyPayment(ledger, state);
  } else {
    settlePayment(ledger, state, state.outcome === 'success' ? 'pay' : state.outcome, false);
  }
}

/**
 * Settles a payment as the customer (or the outcome) chose: paid (a receipt; the subscription starts), declined
 * (`limit_info`) or failed 3DS (the subscription is canceled); then its webhook.
 */
export function settlePayment(
  ledger: Ledger,
  state: PaymentState,
  action: CheckoutAction | 'insufficient_funds',
  afterThreeDs: boolean,
): void {
  const { record } = state;
  const now = ledger.clock.now();
  record.processed_at = formatTimestamp(now);
  record.user_action_required = false;
  delete record.user_action_url;
  if (action === 'pay') {
    Object.assign(record, record.method === 'auth' ? STATUS.authSuccess : STATUS.purchaseSuccess, {
      eci: afterThreeDs ? '05' : '07',
    });
    issueReceipt(ledger, record);
    setStatusOfSubscription(ledger, state, 'active', now);
  } else {
    Object.assign(
      record,
      action === 'decline'
        ? STATUS.declined
        : action === 'insufficient_funds'
          ? STATUS.insufficientFunds
          : STATUS.failed3ds,
    );
    if (action === 'decline') record.limit_info = limitInfo(now);
    setStatusOfSubscription(ledger, state, 'canceled', now);
  }
  notifyPayment(ledger, state);
}

/** Sets the status of the payment's subscription, if it has one. */
export function setStatusOfSubscription(
  ledger: Ledger,
  state: PaymentState,
  status: 'active' | 'canceled',
  now: Date,
): void {
  if (state.subscriptionId === undefined) return;
  setSubscriptionStatus(subscriptionOf(ledger, state.subscriptionId), status, now);
}
