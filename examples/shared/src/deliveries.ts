// The notifications the examples' tests and the demo send; test/support/signed-form.ts signs them.

/** A notification as the service sends it (spec 6.1, 6.2): a plain JSON object. */
export type NotificationJson = Record<string, unknown>;

const POS_ID = '5f1c2a6e-0d3b-4c8e-9a41-7b2d9e6f1a03';

/**
 * A purchase notification with the spec's required fields; `fields` override or add any.
 *
 * @example
 * purchase({ status: 'pending', status_code: '2122', user_action_required: true });
 */
export function purchase(fields: NotificationJson = {}): NotificationJson {
  return {
    payment_id: '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c',
    order_id: 'order-1001',
    pos_id: POS_ID,
    mode: 'direct',
    method: 'purchase',
    amount: 249.9,
    currency: 'UAH',
    status: 'success',
    status_code: '1000',
    status_description: 'Transaction is successful',
    created_at: '2025-03-14T09:26:53.589',
    processed_at: '2025-03-14T09:27:10.112',
    ...fields,
  };
}

/**
 * A refund notification (a secondary operation: it carries `operation_id`).
 *
 * @example
 * refund({ amount: 49.9 });
 */
export function refund(fields: NotificationJson = {}): NotificationJson {
  return {
    operation_id: 'c4d5e6f7-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
    payment_id: '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c',
    order_id: 'order-1001',
    pos_id: POS_ID,
    mode: 'direct',
    method: 'refund',
    amount: 100,
    currency: 'UAH',
    status: 'success',
    status_code: '1000',
    status_description: 'Refund successful',
    created_at: '2025-03-15T11:02:00',
    ...fields,
  };
}

/**
 * One charge of a subscription: a purchase carrying `recurring`, told apart by its `transaction_id`.
 *
 * @example
 * recurringCharge('tx-2', { processed_at: '2025-05-01T10:00:00' });
 */
export function recurringCharge(transactionId: string, fields: NotificationJson = {}): NotificationJson {
  return purchase({
    payment_id: '7e8f9a0b-1c2d-4e3f-a4b5-c6d7e8f9a0b1',
    order_id: 'subscription-42',
    transaction_id: transactionId,
    amount: 99,
    recurring: { id: 'rec-42', status: 'active' },
    ...fields,
  });
}
