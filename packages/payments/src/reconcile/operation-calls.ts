import type { OperationRecord } from '../validation/requests.js';
import { call, type Settings, segment } from './api-call.js';
import { ApiError } from './api-errors.js';
import {
  amountBody,
  type CaptureRequest,
  leftOf,
  type OrderOperation,
  operationFrom,
  operationsFrom,
  type RefundRequest,
  unknownOutcome,
} from './operations.js';

// The client's calls of the secondary operations and the order's status: each sent once, never retried.

/** The `FailedCall` of a path: how its errors name the call and what they redact. */
function failedCall(settings: Settings, method: string, path: string, redact: (t: string) => string) {
  const { authScheme } = settings;
  return { method, path, authScheme, defaultScheme: authScheme === 'SVC', redact };
}

/** `GET …/pos/<pos_id>/orders/<order_id>`: the order's records. */
export async function operations(settings: Settings, orderId: string): Promise<OrderOperation[]> {
  if (typeof orderId !== 'string' || orderId === '') {
    throw new TypeError('[@payhook/payments] orderId must be a non-empty string.');
  }
  const built = `${settings.base.pathname}api/v1/pos/${segment('posId', settings.posId)}/orders/${segment('orderId', orderId)}`;
  const { answer, path, redact } = await call(settings, 'GET', built);
  return operationsFrom(failedCall(settings, 'GET', path, redact), answer);
}

/** A capture or refund: the payment's amount taken from the caller, or read with `getOperations`. */
export async function withAmount(
  settings: Settings,
  operation: 'capture' | 'refund',
  request: CaptureRequest | RefundRequest,
): Promise<OperationRecord> {
  const where = `POST ${settings.base.pathname}api/v1/${operation}`;
  const { posId } = settings;
  if (request?.orderAmount !== undefined) {
    const body = amountBody(where, operation, request, {
      posId,
      orderAmount: request.orderAmount,
      leftCents: undefined,
    });
    return operate(settings, operation, request.orderId, body);
  }
  const listed = await operations(settings, request?.orderId);
  const left = leftOf(listed);
  if (left.payment === undefined) {
    throw new ApiError(
      'api.answer_invalid',
      `${where} not sent: the operations of the order hold no payment record (method auth or purchase) to read order_amount from; pass orderAmount.`,
    );
  }
  const known = {
    posId,
    orderAmount: left.payment.amount,
    currency: left.payment.currency,
    leftCents: left[operation],
  };
  return operate(settings, operation, request.orderId, amountBody(where, operation, request, known));
}

/** One operation POST, sent once: its record, or an `ApiError` (a timeout says the outcome is unknown). */
export async function operate(
  settings: Settings,
  operation: 'capture' | 'refund' | 'void' | 'split capture',
  orderId: string,
  body: string,
): Promise<OperationRecord> {
  const built = `${settings.base.pathname}api/v1/${operation === 'split capture' ? 'split/capture' : operation}`;
  const hint = unknownOutcome(operation, orderId);
  const { answer, path, redact } = await call(settings, 'POST', built, body, hint);
  return operationFrom(failedCall(settings, 'POST', path, redact), answer);
}
