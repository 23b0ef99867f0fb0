import { currencyExponent, type Notification, toMinorUnits } from '@payhook/core';

/**
 * One notification as the ledger keeps it: what moves a payment, nothing personal (no card, no customer), in
 * short names since a payment's log is read whole on every delivery. Stored as JSON by every store.
 */
export interface LedgerFact {
  /** The delivery's key (the duplicate-detection key), which makes recording idempotent. */
  readonly k: string;
  /** `method`. */
  readonly m: string;
  /** `status`. */
  readonly s: string;
  /** `kind`: p(rimary), s(econdary), o(ther). */
  readonly d: 'p' | 's' | 'o';
  /** The amount in minor units, when it parsed. */
  readonly a?: number;
  /** `currency`. */
  readonly c?: string;
  /** `operation_id` of a secondary operation. */
  readonly o?: string;
  /** `transaction_id` of a subscription's charge (a notification carrying `recurring`). */
  readonly t?: string;
  /** `recurring.status`, and `recurring.id`. */
  readonly r?: string;
  readonly ri?: string;
  /** When it was recorded, epoch ms. */
  readonly at: number;
}

/** The ledger's fact of `notification`, recorded under `key` at `now`. */
export function factOf(notification: Notification, key: string, now: number): LedgerFact {
  const kind = notification.kind === 'primary' ? 'p' : notification.kind === 'secondary' ? 's' : 'o';
  const fact: Record<string, unknown> = {
    k: key,
    m: notification.method,
    s: notification.status,
    d: kind,
    at: now,
  };
  const minor = minorUnits(notification.amount, notification.currency);
  if (minor !== undefined) {
    fact.a = minor;
    fact.c = notification.currency;
  }
  if (notification.kind !== 'primary' && notification.operation_id) fact.o = notification.operation_id;
  if (notification.kind === 'primary' && notification.recurring) {
    fact.t = notification.transaction_id ?? notification.payment_id;
    fact.r = notification.recurring.status;
    fact.ri = notification.recurring.id;
  }
  return fact as unknown as LedgerFact;
}

/**
 * The key a fact is recorded under when the handler keeps none (`key` answered `undefined`): what identifies the
 * notification's news, so a copy of it is recorded once.
 */
export function fallbackKey(notification: Notification): string {
  const id = (notification.kind !== 'primary' && notification.operation_id) || notification.transaction_id;
  return `${notification.method}:${notification.status}:${notification.payment_id}:${id ?? ''}`;
}

function minorUnits(amount: unknown, currency: unknown): number | undefined {
  if (typeof amount !== 'number' && typeof amount !== 'string') return undefined;
  try {
    return toMinorUnits(amount, typeof currency === 'string' ? currency : '');
  } catch {
    return undefined;
  }
}

/** Minor units back to the amount as the service writes it. */
export function majorUnits(minor: number, currency: string | undefined): number {
  return minor / 10 ** (currency === undefined ? 2 : currencyExponent(currency));
}
