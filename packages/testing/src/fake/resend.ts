import type { OperationRecord, PaymentRecord } from '@payhook/payments';
import { FakeServiceError } from './errors.js';
import { type Ledger, ownerKey, paymentState, sendWebhook, viewOf } from './ledger.js';
import { STATUS } from './outcomes.js';

/**
 * `GET /api/v1/pos/<pos_id>/orders/<order_id>/<operation>?callback=true[&transactionId=]`: sends the webhook of
 * that operation again and answers its record (the latest charge of a subscription without `transactionId`).
 * @throws {FakeServiceError} `N-404` (404) when there is no such order, operation or transaction.
 */
export function resendWebhook(
  ledger: Ledger,
  posId: string,
  orderId: string,
  operation: string,
  transactionId?: string,
): PaymentRecord | OperationRecord {
  const state = paymentState(ledger, ledger.byOrder.get(ownerKey(posId, orderId)));
  if (operation === 'capture' || operation === 'void' || operation === 'refund') {
    const found = state.operations
      .filter(
        (op) =>
          op.method === operation && (transactionId === undefined || op.transaction_id === transactionId),
      )
      .at(-1);
    if (!found) throw new FakeServiceError('N-404', 404, `No ${operation} was made on this order.`);
    sendWebhook(ledger, state, found, false);
    return structuredClone(found);
  }
  if (operation !== state.record.method) {
    throw new FakeServiceError('N-404', 404, `This order has no ${operation} operation.`);
  }
  const transactions = [
    { record: state.record, charge: false },
    ...state.charges.map((c) => ({ record: c.record, charge: true })),
  ];
  const found =
    transactionId === undefined
      ? transactions.at(-1)
      : transactions.find((t) => t.record.transaction_id === transactionId);
  if (!found)
    throw new FakeServiceError('N-404', 404, 'No transaction with this transactionId on this order.');
  const record = viewOf(ledger, state, found.record);
  // Before the customer acts the service has sent nothing (3.1 shows no status for it): nothing to re-send.
  if (record.status !== STATUS.created.status) sendWebhook(ledger, state, record, found.charge);
  return record;
}
