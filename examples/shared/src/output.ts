import type { Delivery, Notification } from '@payhook/core';

/** The facts of a notification an example prints: identifiers, method, status and amount, never card data. */
export interface NotificationLine {
  payment_id: string;
  order_id: string;
  operation_id?: string;
  transaction_id?: string;
  recurring_id?: string;
  method: string;
  status: string;
  status_code?: string;
  amount: number;
  currency: string;
  key: string | null;
}

/**
 * The one-line summary of a notification that reached the application handler.
 *
 * @example
 * summarize(notification, delivery); // { payment_id: '…', order_id: 'order-1001', method: 'purchase', … }
 */
function summarize(notification: Notification, delivery: Delivery): NotificationLine {
  const { payment_id, order_id, transaction_id, method, status, status_code, amount, currency } =
    notification;
  const operationId = notification.kind === 'primary' ? undefined : notification.operation_id;
  const recurringId = notification.kind === 'primary' ? notification.recurring?.id : undefined;
  return {
    payment_id,
    order_id,
    ...(operationId === undefined ? {} : { operation_id: operationId }),
    ...(transaction_id === undefined ? {} : { transaction_id }),
    ...(recurringId === undefined ? {} : { recurring_id: recurringId }),
    method,
    status,
    ...(status_code === undefined ? {} : { status_code }),
    amount,
    currency,
    key: delivery.key ?? null,
  };
}

/**
 * Prints a notification as one line of JSON on stdout, for logs and for the demo to read.
 *
 * @example
 * webhookMiddleware({ secret }).onAny((notification, req, delivery) => printNotification(notification, delivery));
 */
export function printNotification(notification: Notification, delivery: Delivery): void {
  process.stdout.write(`${JSON.stringify(summarize(notification, delivery))}\n`);
}
