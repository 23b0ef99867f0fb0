import type { IncomingMessage } from 'node:http';
import { createWebhookHandler } from '@payhook/core';
import { PLANTED_SECRET, type PlantedInstance } from './serve.js';

interface Order {
  paid: number;
  refunded: number;
  purchased: boolean;
  /** Refund `operation_id`s counted. */
  readonly applied: Set<string>;
  /** Refunds that came before their purchase. */
  readonly parked: Array<{ id: string; amount: number }>;
}

/**
 * Planted bug (c), which needs two faults at once: the app keeps its own idempotency (no duplicate store) by
 * refund `operation_id`, and parks a refund that arrives before its purchase until the purchase comes. A copy of
 * a refund is ignored once applied, and a refund before its purchase is parked and applied once; but when two
 * copies of a refund both arrive before the purchase, both are parked, and the buggy app counts each parked entry.
 * The fixed app applies parked refunds through the same `operation_id` check.
 */
export function parkedRefunds({ fixed }: { fixed: boolean }): PlantedInstance {
  const orders = new Map<string, Order>();
  const orderOf = (orderId: string): Order => {
    let order = orders.get(orderId);
    if (!order) {
      order = { paid: 0, refunded: 0, purchased: false, applied: new Set(), parked: [] };
      orders.set(orderId, order);
    }
    return order;
  };
  const apply = (order: Order, refund: { id: string; amount: number }) => {
    if (order.applied.has(refund.id)) return;
    order.applied.add(refund.id);
    order.refunded += refund.amount;
  };
  const webhook = createWebhookHandler<IncomingMessage>({
    secret: PLANTED_SECRET,
    logger: false,
    store: false,
  })
    .on('purchase.success', (payment) => {
      const order = orderOf(payment.order_id);
      if (order.purchased) return;
      order.purchased = true;
      order.paid = payment.amount;
      for (const refund of order.parked.splice(0)) {
        if (fixed) apply(order, refund);
        else {
          // The bug: parked entries are trusted to be distinct, so a parked copy counts as a refund of its own.
          order.applied.add(refund.id);
          order.refunded += refund.amount;
        }
      }
    })
    .on('refund.success', (refund) => {
      const order = orderOf(refund.order_id);
      const entry = { id: refund.operation_id, amount: refund.amount };
      if (order.purchased) apply(order, entry);
      else order.parked.push(entry);
    });
  return {
    webhook,
    order: (orderId) => {
      const order = orders.get(orderId);
      return order && { paid: order.paid, refunded: order.refunded, parked: order.parked.length };
    },
  };
}
