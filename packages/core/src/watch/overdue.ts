import { publishOverdue } from '../diagnostics/channels.js';
import type { ReconcileStatus } from '../reconcile/reconciler.js';

/** Where the watch logs each payment reported overdue. */
export type WatchLogger = Pick<Console, 'warn'> | false;

/**
 * A payment the watch gave up on: still unsettled after `maxTries` runs (`unsettled`), or an order the service
 * answered it does not know (`unknown_order`). Ids, counts and codes only: never a record, a key or a card field.
 *
 * @example
 * onOverdue: (p: OverduePayment) => ops.alert(`${p.orderId}: ${p.reason} after ${p.tries} tries`)
 */
export interface OverduePayment {
  /** The merchant's `order_id`. */
  readonly orderId: string;
  /** The payment's method (`purchase`, `auth`). */
  readonly operation: string;
  /** When it was registered. */
  readonly createdAt: Date;
  /** How many runs tried it. */
  readonly tries: number;
  /** `unsettled`: no final notification after `maxTries`; `unknown_order`: the service does not know the order. */
  readonly reason: 'unsettled' | 'unknown_order';
  /** What the last try did (`requested`, `pending`, `failed`, …). */
  readonly lastResult: ReconcileStatus;
  /** The payment's status in the last record the service answered. */
  readonly paymentStatus?: string;
  /** The `ApiError` code of the last try, when it failed. */
  readonly errorCode?: string;
}

/** Each payment to the callback, the log and the `payhook:watch` channel; a failing callback or logger is ignored. */
export function reportOverdue(
  overdue: readonly OverduePayment[],
  settings: {
    readonly onOverdue: ((payment: OverduePayment) => void) | undefined;
    readonly logger: WatchLogger;
  },
): void {
  for (const payment of overdue) {
    publishOverdue({ reason: payment.reason, operation: payment.operation, tries: payment.tries });
    // A failing alert or logger must not stop the report of the others.
    quietly(() => settings.onOverdue?.(payment));
    quietly(() => (settings.logger ? settings.logger.warn(describeOverdue(payment)) : undefined));
  }
}

/** Calls `call`, ignoring its throw and, for an async one (an alert posted somewhere), its rejection. */
function quietly(call: () => unknown): void {
  try {
    const result = call();
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
      Promise.resolve(result).catch(() => undefined);
    }
  } catch {
    // Ignored, as documented.
  }
}

function describeOverdue(p: OverduePayment): string {
  const order = `order ${JSON.stringify(p.orderId)} (${p.operation}, created ${p.createdAt.toISOString()})`;
  if (p.reason === 'unknown_order') {
    return `[@payhook/core] payment watch: the service does not know ${order}: no longer watched. Check that the payment was created (its creation may have failed before reaching the service).`;
  }
  const last = `${p.lastResult}${p.paymentStatus ? `, status ${p.paymentStatus}` : ''}${p.errorCode ? `, ${p.errorCode}` : ''}`;
  return `[@payhook/core] payment watch: ${order} still has no final notification after ${p.tries} tries (last: ${last}): no longer watched. Look it up with the service.`;
}
