import type { IncomingMessage } from 'node:http';
import { createWebhookHandler } from '@payhook/core';
import { PLANTED_SECRET, type PlantedInstance } from './serve.js';

/** Statuses a payment does not leave: a late `pending` must not overwrite them. */
const SETTLED = new Set(['success', 'failure']);

/**
 * Planted bug (b): an order's status written from whichever webhook came last. A 3-D Secure purchase sends
 * `pending` then `success`; delivered the other way round, the buggy app ends on `pending`. The fixed app never
 * lets a settled status (`success`, `failure`) be replaced by `pending`.
 */
export function lastWebhookWins({ fixed }: { fixed: boolean }): PlantedInstance {
  const orders = new Map<string, { status: string }>();
  const webhook = createWebhookHandler<IncomingMessage>({ secret: PLANTED_SECRET, logger: false }).on(
    'purchase',
    (payment) => {
      const known = orders.get(payment.order_id)?.status;
      if (fixed && known !== undefined && SETTLED.has(known) && payment.status === 'pending') return;
      orders.set(payment.order_id, { status: payment.status });
    },
  );
  return { webhook, order: (orderId) => orders.get(orderId) };
}
