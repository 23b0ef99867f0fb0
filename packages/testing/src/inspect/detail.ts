import { diffNotifications, type InspectedDelivery } from './deliveries.js';
import { type LedgerReader, type LedgerView, readLedger } from './ledger.js';

/**
 * What the page shows of one delivery: the delivery, every other delivery of the same notification key and what
 * each changed, every delivery of its payment (the purchase, its refunds and captures, and their copies) in the
 * order they came, and, with a ledger, the payment's ledger entry by its `order_id`.
 */
export async function deliveryDetail(
  deliveries: readonly InspectedDelivery[],
  delivery: InspectedDelivery,
  ledger: LedgerReader | undefined,
) {
  const others =
    delivery.key === undefined
      ? []
      : deliveries.filter((d) => d.key === delivery.key && d.id !== delivery.id);
  const payment =
    delivery.payment === undefined ? [] : deliveries.filter((d) => d.payment === delivery.payment);
  const view: LedgerView | undefined =
    ledger === undefined || delivery.order === undefined
      ? undefined
      : await readLedger(ledger, delivery.order);
  return {
    delivery,
    payment: payment.map(({ id, at, event, status, outcome, code, amount, operation }) => ({
      id,
      at,
      event,
      ...(status === undefined ? {} : { status }),
      ...(outcome === undefined ? {} : { outcome }),
      ...(code === undefined ? {} : { code }),
      ...(amount === undefined ? {} : { amount }),
      ...(operation === undefined ? {} : { operation }),
    })),
    related: others.map(({ id, at, status, outcome, code, notification }) => ({
      id,
      at,
      status,
      outcome,
      code,
      changes: diffNotifications(delivery.notification ?? {}, notification ?? {}),
    })),
    ...(view === undefined ? {} : { ledger: view }),
  };
}
