import type { IncomingMessage } from 'node:http';
import { createWebhookHandler } from '@payhook/core';
import { createPaymentLedger } from '@payhook/payments';
import { PLANTED_SECRET, type PlantedInstance } from './serve.js';

/**
 * Planted bug (b): an order's status written from whichever webhook came last. A 3-D Secure purchase sends
 * `pending` then `success`; delivered the other way round, the buggy app ends on `pending`. The fixed app records
 * each notification in a payment ledger (`ledger` option), which answers the late `pending` as `stale` before
 * any handler runs.
 */
export function lastWebhookWins({ fixed }: { fixed: boolean }): PlantedInstance {
  const orders = new Map<string, { status: string }>();
  const webhook = createWebhookHandler<IncomingMessage>({
    secret: PLANTED_SECRET,
    logger: false,
    ...(fixed ? { ledger: createPaymentLedger() } : {}),
  }).on('purchase', (payment) => {
    orders.set(payment.order_id, { status: payment.status });
  });
  return { webhook, order: (orderId) => orders.get(orderId) };
}
