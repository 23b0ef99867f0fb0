import { printable } from '@payhook/core/adapter';
import { publishOverdue } from '@payhook/core/diagnostics';
import type { ReconcileStatus } from '../reconcile/reconciler.js';
import type { WatchedPayment } from './contract.js';

/** Where the watch logs each payment reported overdue. */
export type WatchLogger = Pick<Console, 'warn'> | false;

/**
 * Why a payment was reported: `unsettled`, no final notification after `maxTries` runs that asked the service;
 * `unknown_order`, the service does not know the order; `api_unreachable`, every run for `unreachableAfterMs`
 * failed to reach the service's API about it.
 *
 * @example
 * const reason: OverdueReason = 'api_unreachable';
 */
export type OverdueReason = 'unsettled' | 'unknown_order' | 'api_unreachable';

/**
 * A payment the watch gave up on: still unsettled after `maxTries` runs (`unsettled`), an order the service
 * answered it does not know (`unknown_order`), or one the service's API could not be asked about for
 * `unreachableAfterMs` (`api_unreachable`). Ids, counts and codes only: never a record, a key or a card field.
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
  /** How many runs asked the service about it (a run that could not reach the service counts none). */
  readonly tries: number;
  /** `unsettled`, `unknown_order` or `api_unreachable` (see `OverdueReason`). */
  readonly reason: OverdueReason;
  /** What the last try did (`requested`, `pending`, `failed`, …). */
  readonly lastResult: ReconcileStatus;
  /** The payment's status in the last record the service answered. */
  readonly paymentStatus?: string;
  /** The `ApiError` code of the last try, when it failed. */
  readonly errorCode?: string;
}

/**
 * The service's API could not be asked about some payments of one run (`api.network`, `api.timeout`,
 * `api.server`, a 429): they stay watched with no try counted, or are reported `api_unreachable` once every run
 * for `unreachableAfterMs` failed to reach it about them.
 *
 * @example
 * onUnreachable: (o: WatchOutage) => ops.warn(`payment API down: ${o.payments.length} payments not asked`)
 */
export interface WatchOutage {
  /** The payments the run could not ask about. */
  readonly payments: readonly WatchedPayment[];
  /** The first such error, an `ApiError` (its message names the call, never a key or a record). */
  readonly error: Error;
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
    // A metric's attribute: an entry a former version kept may hold anything.
    const operation = printable(payment.operation, 32);
    publishOverdue({ reason: payment.reason, operation, tries: payment.tries });
    // A failing alert or logger must not stop the report of the others.
    quietly(() => settings.onOverdue?.(payment));
    quietly(() => (settings.logger ? settings.logger.warn(describeOverdue(payment)) : undefined));
  }
}

/** After this many unreachable answers in a row, a run asks the service about no more payments. */
export const STOP_AFTER = 3;

/** A payment a run could not ask about: `skipped` when not asked at all (`STOP_AFTER`), `reported` when overdue. */
export interface Unreachable {
  readonly payment: WatchedPayment;
  readonly error: Error;
  readonly skipped: boolean;
  readonly reported: boolean;
}

/** One report per run whose API calls could not reach the service: to `onUnreachable` and the log. */
export function reportUnreachable(
  failures: readonly Unreachable[],
  settings: {
    readonly onUnreachable: ((outage: WatchOutage) => void) | undefined;
    readonly logger: WatchLogger;
    readonly retryAfterMs: number;
  },
): void {
  const first = failures[0];
  if (first === undefined) return;
  const outage: WatchOutage = { payments: failures.map((f) => f.payment), error: first.error };
  quietly(() => settings.onUnreachable?.(outage));
  quietly(() => (settings.logger ? settings.logger.warn(describeOutage(failures, settings)) : undefined));
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

/** Text the watch did not write (an order id, a status, what the service said), as its log lines carry it. */
const shown = (text: string, max: number) => printable(text, max);

function describeOverdue(p: OverduePayment): string {
  const order = `order "${shown(p.orderId, 256)}" (${shown(p.operation, 32)}, created ${p.createdAt.toISOString()})`;
  if (p.reason === 'unknown_order') {
    return `[@payhook/payments] payment watch: the service does not know ${order}: no longer watched. Check that the payment was created (its creation may have failed before reaching the service).`;
  }
  if (p.reason === 'api_unreachable') {
    return `[@payhook/payments] payment watch: the service's API could not be asked about ${order} (last: ${shown(p.errorCode ?? p.lastResult, 64)}) for unreachableAfterMs: no longer watched. Look it up with the service once it answers.`;
  }
  const status = p.paymentStatus ? `, status ${shown(p.paymentStatus, 64)}` : '';
  const last = `${p.lastResult}${status}${p.errorCode ? `, ${shown(p.errorCode, 64)}` : ''}`;
  return `[@payhook/payments] payment watch: ${order} still has no final notification after ${p.tries} tries (last: ${last}): no longer watched. Look it up with the service.`;
}

function describeOutage(
  failures: readonly Unreachable[],
  settings: { readonly retryAfterMs: number },
): string {
  const codes = new Map<string, number>();
  for (const { error } of failures.filter((f) => !f.skipped)) {
    const code = shown(String((error as { code?: unknown }).code ?? error.name), 64);
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  const skipped = failures.filter((f) => f.skipped).length;
  const counts = [...codes].map(([code, n]) => `${code}: ${n}`).join(', ');
  const notAsked = skipped > 0 ? `; ${skipped} not asked after ${STOP_AFTER} failures in a row` : '';
  const reported = failures.filter((f) => f.reported).length;
  const watched = failures.length - reported;
  const outcome = [
    ...(watched > 0
      ? [
          `no try counted${reported > 0 ? ` for ${watched}` : ''}, asked again in ${settings.retryAfterMs} ms (retryAfterMs)`,
        ]
      : []),
    ...(reported > 0 ? [`${reported} reported api_unreachable, no longer watched`] : []),
  ].join('; ');
  const first = shown(failures[0]!.error.message.replace(/^\[@payhook\/(core|payments)\] /, ''), 1_000);
  return `[@payhook/payments] payment watch: the service's API could not be reached about ${failures.length} payment(s) (${counts}${notAsked}): ${outcome}. First error: ${first}`;
}
