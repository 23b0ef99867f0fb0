import type { IncomingMessage } from 'node:http';
import { createWebhookHandler } from '@payhook/core';
import { PLANTED_SECRET, type PlantedInstance } from './serve.js';

/**
 * Planted bug (a): charges counted without idempotency. The buggy app turns the duplicate store off
 * (`store: false`), so every copy of a `purchase success` is counted again; the fixed one keeps the default
 * `MemoryStore`, which answers a copy `duplicate` without running the handler.
 */
export function countsCharges({ fixed }: { fixed: boolean }): PlantedInstance {
  const orders = new Map<string, { charges: number; charged: number }>();
  const webhook = createWebhookHandler<IncomingMessage>({
    secret: PLANTED_SECRET,
    logger: false,
    ...(fixed ? {} : { store: false as const }),
  }).on('purchase.success', (payment) => {
    const order = orders.get(payment.order_id) ?? { charges: 0, charged: 0 };
    order.charges += 1;
    order.charged += payment.amount;
    orders.set(payment.order_id, order);
  });
  return { webhook, order: (orderId) => orders.get(orderId) };
}
