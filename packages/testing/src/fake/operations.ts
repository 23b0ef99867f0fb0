import type { OperationRecord } from '@payhook/payments';
import { FakeServiceError } from './errors.js';
import { issueReceipt, type Ledger, type PaymentState, paymentState, sendWebhook } from './ledger.js';
import { STATUS } from './outcomes.js';
import { newOperationRecord, type StatusText, toMinor } from './records.js';

/** The operation's amount in minor units: all of `maximum` without `amount`. */
function operationAmount(state: PaymentState, amount: number | undefined, maximum: number): number {
  if (amount === undefined) return maximum;
  let minor: number;
  try {
    minor = toMinor(amount, state.record.currency);
  } catch {
    minor = Number.NaN;
  }
  if (!(minor > 0) || minor > maximum) {
    throw new FakeServiceError(
      'O-422',
      422,
      'The operation amount must be positive and at most what is left.',
    );
  }
  return minor;
}

/** Records the operation on the payment and sends its webhook; answers a copy. */
function operate(
  ledger: Ledger,
  state: PaymentState,
  method: 'capture' | 'void' | 'refund',
  minor: number,
  status: StatusText,
  serverUrl: string | undefined,
): OperationRecord {
  const operation = newOperationRecord({
    payment: state.record,
    method,
    minor,
    status,
    ids: ledger.ids,
    now: ledger.clock.now(),
  });
  if (method === 'refund') issueReceipt(ledger, operation);
  state.operations.push(operation);
  sendWebhook(ledger, state, operation, false, serverUrl);
  return structuredClone(operation);
}

/**
 * Captures an authorization (`method: auth`), all of it or `amount`; sends the capture webhook (6.2).
 * @throws {FakeServiceError} `N-404` unknown payment, `O-409` not capturable, `O-422` amount out of range.
 */
export function capture(
  ledger: Ledger,
  paymentId: string,
  amount?: number,
  serverUrl?: string,
): OperationRecord {
  const state = paymentState(ledger, paymentId);
  const { record } = state;
  if (record.method !== 'auth' || record.status !== 'success' || state.voided || state.capturedMinor > 0) {
    throw new FakeServiceError('O-409', 409, 'Only a successful, uncaptured, unvoided auth can be captured.');
  }
  const minor = operationAmount(state, amount, toMinor(record.amount, record.currency));
  state.capturedMinor = minor;
  return operate(ledger, state, 'capture', minor, STATUS.purchaseSuccess, serverUrl);
}

/**
 * Voids an uncaptured authorization or an unrefunded purchase, for its whole amount.
 * @throws {FakeServiceError} `N-404` unknown payment, `O-409` nothing to void.
 */
export function voidPayment(ledger: Ledger, paymentId: string, serverUrl?: string): OperationRecord {
  const state = paymentState(ledger, paymentId);
  const { record } = state;
  if (record.status !== 'success' || state.voided || state.capturedMinor > 0 || state.refundedMinor > 0) {
    throw new FakeServiceError(
      'O-409',
      409,
      'Only a successful payment with no capture or refund can be voided.',
    );
  }
  state.voided = true;
  const minor = toMinor(record.amount, record.currency);
  return operate(ledger, state, 'void', minor, STATUS.purchaseSuccess, serverUrl);
}

/**
 * Refunds a purchase (or a captured auth), all that is left or `amount`; sends the refund webhook
 * (`refundWebhookCode`) and answers the refund response, `1004` as spec 3.1 shows it.
 * @throws {FakeServiceError} `N-404` unknown payment, `O-409` not refundable, `O-422` amount out of range.
 */
export function refund(
  ledger: Ledger,
  paymentId: string,
  amount?: number,
  serverUrl?: string,
): OperationRecord {
  const state = paymentState(ledger, paymentId);
  const { record } = state;
  const paid = record.method === 'auth' ? state.capturedMinor : toMinor(record.amount, record.currency);
  if (record.status !== 'success' || state.voided || paid - state.refundedMinor <= 0) {
    throw new FakeServiceError('O-409', 409, 'Nothing is left to refund on this payment.');
  }
  const minor = operationAmount(state, amount, paid - state.refundedMinor);
  state.refundedMinor += minor;
  const webhook = ledger.refundWebhookCode === '1004' ? STATUS.refundSuccess : STATUS.purchaseSuccess;
  return { ...operate(ledger, state, 'refund', minor, webhook, serverUrl), ...STATUS.refundSuccess };
}
