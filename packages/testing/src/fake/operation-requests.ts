import { isValidAmount, type OperationRecord, type PaymentRecord } from '@payhook/payments';
import { credentialsError, FakeServiceError, type FakeViolation } from './errors.js';
import { type Ledger, ownerKey, paymentState, viewOf } from './ledger.js';
import { capture, refund, voidPayment } from './operations.js';
import type { FakeProject } from './projects.js';
import { toMinor } from './records.js';

// The operation requests public merchant code sends (public-facts, "four more integrations"): the spec names
// capture, void and refund (2.2, 6.2) but shows no endpoint for them. Each rule a safe choice, in
// docs/assumptions.md ("Capture, void, refund and the order's status").

/**
 * The operation routes under `/api/v1/` that `FakeService.operationRequest` answers.
 *
 * @example
 * fake.operationRequest('refund' satisfies OperationRoute, { order_id: 'o-1', refund_amount: 20 });
 */
export type OperationRoute = 'capture' | 'void' | 'refund' | 'split/capture';

/** The field naming the amount of each route, and the one naming the currency. */
const FIELDS: Record<OperationRoute, { amount?: string; currency: string }> = {
  capture: { amount: 'charge_amount', currency: 'order_currency' },
  refund: { amount: 'refund_amount', currency: 'order_currency' },
  void: { currency: 'currency' },
  'split/capture': { amount: 'charge_amount', currency: 'currency' },
};

class Checks {
  readonly violations: FakeViolation[] = [];
  add(field: string, code: string, message: string): void {
    this.violations.push({ field, code, message });
  }
}

/** An amount as sent: a number, or (unless strict) a numeric string; `undefined` after a violation. */
function amountOf(
  checks: Checks,
  body: Record<string, unknown>,
  field: string,
  strict: boolean,
): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) {
    checks.add(field, 'required', `${field} is required.`);
    return undefined;
  }
  const number = typeof value === 'string' && !strict && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !isValidAmount(number)) {
    checks.add(field, 'amount.invalid', `${field} must be a positive number with at most 2 decimals.`);
    return undefined;
  }
  return number;
}

/** An optional string field (`null` as not sent, as public code writes nulls). */
function optionalText(checks: Checks, body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    checks.add(field, 'type', `${field} must be a string.`);
    return undefined;
  }
  return value;
}

/** The order's payment: `order_id` a string (a number too unless strict), and one of this project. */
function paymentOf(ledger: Ledger, project: FakeProject, body: Record<string, unknown>) {
  const raw = body.order_id;
  const orderId = typeof raw === 'number' && !ledger.strict ? String(raw) : raw;
  if (typeof orderId !== 'string' || orderId === '') {
    throw new FakeServiceError('V-400', 400, 'The request is invalid: see args.violations.', [
      { field: 'order_id', code: 'required', message: 'order_id is required.' },
    ]);
  }
  const id = ledger.byOrder.get(ownerKey(project.posId, orderId));
  if (id === undefined) {
    throw new FakeServiceError('N-404', 404, `No order ${JSON.stringify(orderId)} for this project.`);
  }
  return paymentState(ledger, id);
}

/** The split items of a split capture: each a valid amount and a sub-merchant, summed per `splitSum`. */
function checkSplit(
  checks: Checks,
  ledger: Ledger,
  body: Record<string, unknown>,
  amount: number | undefined,
) {
  const { split } = body;
  if (!Array.isArray(split) || split.length === 0) {
    checks.add('split', 'required', 'split must be a non-empty array of { amount, sub_merchant_id }.');
    return;
  }
  let sum = 0;
  split.forEach((item: unknown, i) => {
    const part = (item ?? {}) as Record<string, unknown>;
    const value = amountOf(checks, part, 'amount', ledger.strict);
    if (value !== undefined) sum += Math.round(value * 100);
    if (typeof part.sub_merchant_id !== 'string' || part.sub_merchant_id === '') {
      checks.add(`split[${i}].sub_merchant_id`, 'required', 'sub_merchant_id is required.');
    }
  });
  const rule = ledger.splitSum ?? (ledger.strict ? 'equal' : 'ignore');
  if (amount === undefined || rule === 'ignore' || checks.violations.length > 0) return;
  const total = Math.round(amount * 100);
  if (rule === 'equal' ? sum !== total : sum > total) {
    checks.add('split', 'split.sum', `the split amounts must add up to charge_amount (${rule}).`);
  }
}

/**
 * `POST /api/v1/capture|void|refund|split/capture` as public code sends them: the order by `order_id`, the amount
 * (`charge_amount`, `refund_amount`), the payment's `order_amount` and currency checked against it when sent,
 * `server_url` for this operation's webhook. Answers the operation's record (2.2); its webhook follows (6.2).
 * @throws {FakeServiceError} `S-404` (401) a foreign `pos_id`, `V-400` (400), `N-404` (404) no such order, `O-409`
 * (409) nothing to capture, void or refund, `O-422` (422) an amount above what is left.
 */
export function operationRequest(
  ledger: Ledger,
  project: FakeProject,
  route: OperationRoute,
  body: Record<string, unknown>,
): OperationRecord {
  if (body.pos_id !== undefined && body.pos_id !== null && body.pos_id !== project.posId) {
    throw credentialsError();
  }
  const state = paymentOf(ledger, project, body);
  const { record } = state;
  const checks = new Checks();
  const fields = FIELDS[route];
  const amount = fields.amount ? amountOf(checks, body, fields.amount, ledger.strict) : undefined;
  const currency = optionalText(checks, body, fields.currency);
  if (currency !== undefined && currency !== record.currency) {
    checks.add(fields.currency, 'currency.mismatch', `${fields.currency} is not the payment's currency.`);
  }
  if (body.order_amount !== undefined && body.order_amount !== null) {
    const sent = amountOf(checks, body, 'order_amount', ledger.strict);
    if (sent !== undefined && toMinor(sent, record.currency) !== toMinor(record.amount, record.currency)) {
      checks.add('order_amount', 'amount.mismatch', "order_amount is not the payment's amount.");
    }
  }
  optionalText(checks, body, 'comment');
  const serverUrl = optionalText(checks, body, 'server_url');
  if (route === 'split/capture') checkSplit(checks, ledger, body, amount);
  if (checks.violations.length > 0) {
    throw new FakeServiceError(
      'V-400',
      400,
      'The request is invalid: see args.violations.',
      checks.violations,
    );
  }
  const id = record.payment_id;
  if (route === 'void') return voidPayment(ledger, id, serverUrl);
  if (route === 'refund') return refund(ledger, id, amount, serverUrl);
  return capture(ledger, id, amount, serverUrl);
}

/**
 * `GET /api/v1/pos/<pos_id>/orders/<order_id>`: the order's payment record and each of its operations, oldest
 * first (the status query public code makes).
 * @throws {FakeServiceError} `N-404` (404) when the project has no such order (`…/orders/0` included).
 */
export function orderOperations(
  ledger: Ledger,
  posId: string,
  orderId: string,
): (PaymentRecord | OperationRecord)[] {
  const id = ledger.byOrder.get(ownerKey(posId, orderId));
  if (id === undefined) {
    throw new FakeServiceError('N-404', 404, `No order ${JSON.stringify(orderId)} for this project.`);
  }
  const state = paymentState(ledger, id);
  return [viewOf(ledger, state, state.record), ...structuredClone(state.operations)];
}
