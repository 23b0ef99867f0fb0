import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import {
  createWebhookHandler,
  type DedupeStore,
  type PurchaseNotification,
  type TransactionalStore,
  type WebhookHandler,
} from '@payhook/core';

/** The secret every queue test signs with. */
export const QUEUE_SECRET = 'queue-test-secret';

/**
 * The webhook the queue tests' processes share (web side, worker, child worker): two handlers for a successful
 * purchase, `fulfil` then `email` (`purchase.success` runs before `purchase`), each appending `<handler> <payment_id>` to the ledger file once its work is done.
 * `hang`: the handler that, instead, says `inside` on stdout and never returns (a worker to kill mid-handler).
 */
export function ledgerWebhook(store: DedupeStore, ledger: string, hang?: 'fulfil' | 'email'): WebhookHandler {
  const step = (name: 'fulfil' | 'email') => async (payment: { payment_id: string }) => {
    if (name === hang) {
      process.stdout.write('inside\n');
      await new Promise(() => {});
    }
    appendFileSync(ledger, `${name} ${payment.payment_id}\n`);
  };
  return createWebhookHandler({
    secret: QUEUE_SECRET,
    store,
    logger: false,
    leaseMs: 1_000,
    inFlightWaitMs: 500,
  })
    .on('purchase.success', step('fulfil'))
    .on('purchase', step('email'));
}

/** The ledger's lines, sorted. */
export function readLedger(ledger: string): string[] {
  return existsSync(ledger) ? readFileSync(ledger, 'utf8').trim().split('\n').filter(Boolean).sort() : [];
}

/**
 * A worker-only webhook (no secret: it never receives a delivery) with one handler, `ship`, that appends
 * `ship <payment_id> by <who>` to the ledger once `before` resolved; claims of 1 s (a lapsed one is soon taken).
 */
export function shippingWebhook(
  store: DedupeStore | TransactionalStore,
  ledger: string,
  who: string,
  before?: (payment: PurchaseNotification, signal: AbortSignal) => Promise<void>,
): WebhookHandler {
  return createWebhookHandler({ store, logger: false, leaseMs: 1_000, inFlightWaitMs: 500 }).on(
    'purchase',
    async function ship(payment, _context, delivery) {
      await before?.(payment, delivery.signal);
      appendFileSync(ledger, `ship ${payment.payment_id} by ${who}\n`);
    },
  );
}
