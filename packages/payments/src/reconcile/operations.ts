import { amountCents } from '../validation/formats.js';
import type { OperationRecord, PaymentRecord, SplitItem } from '../validation/requests.js';
import { type Answer, type FailedCall, failure, parseObject } from './api-answer.js';
import { ApiError, type ApiViolation } from './api-errors.js';

// The secondary operations of spec 2.2 (capture, void, refund) and the order's operations, as public merchant code
// calls them (public-facts: `POST /api/v1/capture|void|refund|split/capture`, `GET …/pos/<pos>/orders/<order>`).

/**
 * A capture of an authorization (`POST /api/v1/capture`): `amount` of it, at most what was authorised, once.
 *
 * @example
 * const request: CaptureRequest = { orderId: 'order-1', amount: 60, currency: 'UAH' };
 */
export interface CaptureRequest {
  /** The merchant's `order_id` of the auth. */
  orderId: string;
  /** `charge_amount`: positive, at most 2 decimals. */
  amount: number;
  /** `order_currency`: the payment's currency. */
  currency: string;
  /**
   * `order_amount`: the payment's amount. Read with `getOperations` when not given (one more call, which also
   * lets the client refuse an amount above what is left before sending).
   */
  orderAmount?: number;
}

/**
 * A refund of a purchase or a captured auth (`POST /api/v1/refund`), partial or all that is left.
 *
 * @example
 * const request: RefundRequest = { orderId: 'order-1', amount: 20, currency: 'UAH', orderAmount: 100 };
 */
export interface RefundRequest {
  /** The merchant's `order_id` of the payment. */
  orderId: string;
  /** `refund_amount`: positive, at most 2 decimals. */
  amount: number;
  /** `order_currency`: the payment's currency. */
  currency: string;
  /** `order_amount`: the payment's amount; read with `getOperations` when not given, as for `capture`. */
  orderAmount?: number;
}

/**
 * A void of an uncaptured auth or an unrefunded purchase (`POST /api/v1/void`): always the whole amount.
 *
 * @example
 * const request: VoidRequest = { orderId: 'order-2', currency: 'UAH' };
 */
export interface VoidRequest {
  /** The merchant's `order_id` of the payment. */
  orderId: string;
  /** `currency`, as public code sends it beside `order_id`. */
  currency?: string;
  /** `comment`, kept by the service. */
  comment?: string;
  /** `server_url`: where this operation's webhook goes, when not the payment's. */
  serverUrl?: string;
}

/**
 * A capture of a split payment between sub-merchants (`POST /api/v1/split/capture`).
 *
 * @example
 * const request: SplitCaptureRequest = { orderId: 'o-3', amount: 60, currency: 'UAH', split: [{ amount: 60, sub_merchant_id }] };
 */
export interface SplitCaptureRequest {
  /** The merchant's `order_id` of the payment. */
  orderId: string;
  /** `charge_amount`: positive, at most 2 decimals. */
  amount: number;
  /** `currency`: the payment's currency. */
  currency: string;
  /** Each sub-merchant's part (spec 2.3). */
  split: SplitItem[];
  /** `comment`, kept by the service. */
  comment?: string;
  /** `server_url`: where this operation's webhook goes, when not the payment's. */
  serverUrl?: string;
}

/**
 * One entry of an order's operations as `GET …/pos/<pos_id>/orders/<order_id>` answers them: the payment itself
 * (`method` `auth` or `purchase`, spec 2.1) and each capture, void and refund (2.2), oldest first.
 *
 * @example
 * const refunds = (await client.getOperations('order-1')).filter((o: OrderOperation) => o.method === 'refund');
 */
export type OrderOperation = PaymentRecord | OperationRecord;

/** What the client knows of a payment before a capture or refund: its amount, and what is left when it read the list. */
export interface KnownPayment {
  readonly orderAmount: number;
  /** The payment's currency, when the client read the order's operations. */
  readonly currency?: string | undefined;
  /** Cents left to capture or refund, when the client read the order's operations. */
  readonly leftCents: number | undefined;
}

type Operation = 'capture' | 'refund' | 'void' | 'split capture';

const SECONDARY = new Set(['capture', 'void', 'refund']);

/** Sums of an order's successful operations, in cents: what is left to capture and to refund. */
export function leftOf(operations: readonly OrderOperation[]): {
  payment: PaymentRecord | undefined;
  capture: number;
  refund: number;
} {
  const payment = operations.find((o): o is PaymentRecord => !SECONDARY.has(o.method) && 'amount' in o);
  if (payment === undefined || payment.status !== 'success') return { payment, capture: 0, refund: 0 };
  const total = amountCents(payment.amount) ?? 0;
  const sum = (method: string) =>
    operations
      .filter((o) => o.method === method && o.status === 'success')
      .reduce((cents, o) => cents + (amountCents(o.amount) ?? 0), 0);
  const voided = sum('void') > 0;
  const captured = sum('capture');
  const auth = payment.method === 'auth';
  const paid = auth ? captured : total;
  return {
    payment,
    capture: auth && !voided && captured === 0 ? total : 0,
    refund: voided ? 0 : Math.max(0, paid - sum('refund')),
  };
}

/** `amount` as cents, refused when it is not a positive amount of at most 2 decimals (spec 8). */
function checkedCents(field: string, value: unknown, violations: ApiViolation[]): number | undefined {
  const cents = typeof value === 'number' ? amountCents(value) : undefined;
  if (cents === undefined) violations.push({ field, code: 'amount.invalid' });
  return cents;
}

function checkOrderId(orderId: unknown): void {
  if (typeof orderId !== 'string' || orderId === '') {
    throw new TypeError('[@payhook/payments] orderId must be a non-empty string.');
  }
}

function refuse(where: string, violations: readonly ApiViolation[]): ApiError {
  const list = violations.map((v) => `${v.field} (${v.code})`).join(', ');
  return new ApiError('api.request_invalid', `${where} not sent: ${list}.`, { violations });
}

/**
 * The body of a capture or a refund, in the order public code writes it, checked before anything is sent.
 * @throws {ApiError} `api.request_invalid`, or `api.amount_exceeded` when the client knows what is left.
 */
export function amountBody(
  where: string,
  operation: 'capture' | 'refund',
  request: CaptureRequest | RefundRequest,
  known: KnownPayment & { posId: string },
): string {
  checkOrderId(request.orderId);
  const violations: ApiViolation[] = [];
  const field = operation === 'capture' ? 'charge_amount' : 'refund_amount';
  const cents = checkedCents(field, request.amount, violations);
  const orderCents = checkedCents('order_amount', known.orderAmount, violations);
  if (typeof request.currency !== 'string' || !/^[A-Z]{3}$/.test(request.currency)) {
    violations.push({ field: 'order_currency', code: 'format.currency' });
  } else if (known.currency !== undefined && known.currency !== request.currency) {
    violations.push({ field: 'order_currency', code: 'currency.mismatch' });
  }
  if (violations.length > 0) throw refuse(where, violations);
  const left = known.leftCents ?? orderCents!;
  if (cents! > left) {
    const what = known.leftCents === undefined ? 'the payment amount' : `what is left to ${operation}`;
    throw new ApiError(
      'api.amount_exceeded',
      `${where} not sent: ${field} ${request.amount} ${request.currency} is more than ${what} (${(left / 100).toFixed(2)}); nothing was sent.`,
    );
  }
  return JSON.stringify({
    pos_id: known.posId,
    order_id: request.orderId,
    order_amount: known.orderAmount,
    order_currency: request.currency,
    [field]: request.amount,
  });
}

/** The body of a void: `pos_id`, `order_id`, then what was given. */
export function voidBody(where: string, request: VoidRequest, posId: string): string {
  checkOrderId(request.orderId);
  if (request.currency !== undefined && !/^[A-Z]{3}$/.test(String(request.currency))) {
    throw refuse(where, [{ field: 'currency', code: 'format.currency' }]);
  }
  return JSON.stringify({
    pos_id: posId,
    order_id: request.orderId,
    ...(request.currency !== undefined ? { currency: request.currency } : {}),
    ...(request.comment !== undefined ? { comment: request.comment } : {}),
    ...(request.serverUrl !== undefined ? { server_url: request.serverUrl } : {}),
  });
}

/** The body of a split capture, each split amount checked. */
export function splitCaptureBody(where: string, request: SplitCaptureRequest, posId: string): string {
  checkOrderId(request.orderId);
  const violations: ApiViolation[] = [];
  checkedCents('charge_amount', request.amount, violations);
  if (typeof request.currency !== 'string' || !/^[A-Z]{3}$/.test(request.currency)) {
    violations.push({ field: 'currency', code: 'format.currency' });
  }
  if (!Array.isArray(request.split) || request.split.length === 0) {
    violations.push({ field: 'split', code: 'required' });
  } else {
    request.split.forEach((item, i) => {
      checkedCents(`split[${i}].amount`, item?.amount, violations);
      if (typeof item?.sub_merchant_id !== 'string' || item.sub_merchant_id === '') {
        violations.push({ field: `split[${i}].sub_merchant_id`, code: 'required' });
      }
    });
  }
  if (violations.length > 0) throw refuse(where, violations);
  return JSON.stringify({
    pos_id: posId,
    order_id: request.orderId,
    charge_amount: request.amount,
    currency: request.currency,
    ...(request.comment !== undefined ? { comment: request.comment } : {}),
    ...(request.serverUrl !== undefined ? { server_url: request.serverUrl } : {}),
    split: request.split,
  });
}

/** What an `api.timeout` of an operation says: it may have happened, and how to learn it. */
export function unknownOutcome(operation: Operation, orderId: string): string {
  return ` The outcome is unknown: the ${operation} may have been made. Do not send it again (the service shows no idempotency key); learn it with getOperations(${JSON.stringify(orderId)}) or from its webhook.`;
}

function tooLarge(call: FailedCall, answer: Answer): ApiError {
  return new ApiError(
    'api.answer_too_large',
    `${call.method} ${call.path} answered ${answer.status} with a body over maxAnswerBytes: left unread.`,
    { status: answer.status },
  );
}

/** An operation's answer: the record of 2.2, or the `ApiError` of a refusal. */
export function operationFrom(call: FailedCall, answer: Answer): OperationRecord {
  if (answer.status < 200 || answer.status >= 300) throw failure(call, answer);
  if (answer.text === undefined) throw tooLarge(call, answer);
  const record = parseObject(answer.text);
  if (record === undefined || typeof record.method !== 'string' || typeof record.status !== 'string') {
    throw new ApiError(
      'api.answer_invalid',
      `${call.method} ${call.path} answered ${answer.status} without an operation record (a JSON object with method and status).`,
      { status: answer.status },
    );
  }
  return record as unknown as OperationRecord;
}

/** The status query's answer: the order's records, oldest first. */
export function operationsFrom(call: FailedCall, answer: Answer): OrderOperation[] {
  if (answer.status < 200 || answer.status >= 300) throw failure(call, answer);
  if (answer.text === undefined) throw tooLarge(call, answer);
  let list: unknown;
  try {
    list = JSON.parse(answer.text);
  } catch {
    list = undefined;
  }
  if (!Array.isArray(list) || !list.every((r) => typeof r === 'object' && r !== null && 'method' in r)) {
    throw new ApiError(
      'api.answer_invalid',
      `${call.method} ${call.path} answered ${answer.status} without a list of operation records.`,
      { status: answer.status },
    );
  }
  return list as OrderOperation[];
}
