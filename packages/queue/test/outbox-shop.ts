import { createWebhookHandler, type TransactionalStore, type WebhookHandler } from '@payhook/core';
import type pg from 'pg';
import type { QueueEngine } from '../src/engine.ts';
import { QUEUE_SECRET } from './ledger.ts';

/**
 * The shop of issue 35, shared by the outbox test and its child process: "mark the order paid" inline, in the
 * inbox's transaction (a row in `orders`; an order `fail-…` throws after writing it), and "email the customer" in a
 * worker, which records `<payment_id> <rows of its order it sees>` in `seen`. Without `queue` it is the worker's
 * definition.
 */
export function shopWebhook(
  store: TransactionalStore,
  queue: QueueEngine | undefined,
  pool: pg.Pool,
  orders: string,
  seen: string[] = [],
): WebhookHandler {
  return createWebhookHandler({
    secret: QUEUE_SECRET,
    store,
    logger: false,
    // pg-boss starts on first use, inside the first transaction that enqueues: slow on a loaded machine.
    storeTimeoutMs: 15_000,
    ...(queue ? { queue } : {}),
  })
    .on(
      'purchase',
      async (payment, _context, delivery) => {
        const tx = delivery.transaction as pg.PoolClient;
        await tx.query(`INSERT INTO ${orders} (payment_id) VALUES ($1)`, [payment.payment_id]);
        if (payment.order_id.startsWith('fail-'))
          throw new Error('the inline handler failed after its write');
      },
      { inline: true },
    )
    .on('purchase', async (payment) => {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${orders} WHERE payment_id = $1`,
        [payment.payment_id],
      );
      seen.push(`${payment.payment_id} ${rows[0]!.n}`);
    });
}
