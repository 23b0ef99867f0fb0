import type { WebhookHandler } from '@payhook/core';
import { withDeadline } from '@payhook/core/adapter';
import type { ResendClient, ResendRequest } from '../reconcile/api-client.js';
import { ApiError } from '../reconcile/api-errors.js';
import { createReconciler, type ReconcileResult } from '../reconcile/reconciler.js';
import type { BoundedWatchStore } from './bounded.js';
import { entryId, type WatchedPayment } from './contract.js';
import {
  type OverduePayment,
  type OverdueReason,
  reportOverdue,
  reportUnreachable,
  STOP_AFTER,
  type Unreachable,
  type WatchLogger,
  type WatchOutage,
} from './overdue.js';

/**
 * What one run did: the payments settled by it, those still watched (tried again after `retryAfterMs`), and
 * those reported overdue.
 *
 * @example
 * const { settled, watching, overdue } = await watch.reconcileOverdue();
 */
export interface WatchRunReport {
  readonly settled: readonly WatchedPayment[];
  readonly watching: readonly WatchedPayment[];
  readonly overdue: readonly OverduePayment[];
}

/** What a run needs of the watch's settings. */
export interface RunSettings<C> {
  readonly api: ResendClient;
  readonly webhook: Pick<WebhookHandler<C>, 'process'> | undefined;
  readonly context: C | undefined;
  readonly calls: BoundedWatchStore;
  readonly retryAfterMs: number;
  readonly maxTries: number;
  readonly unreachableAfterMs: number;
  readonly batchSize: number;
  readonly requestsPerSecond: number;
  readonly resendTimeoutMs: number;
  readonly onOverdue: ((payment: OverduePayment) => void) | undefined;
  readonly onUnreachable: ((outage: WatchOutage) => void) | undefined;
  readonly logger: WatchLogger;
  readonly now: () => number;
}

interface Run {
  readonly report: { settled: WatchedPayment[]; watching: WatchedPayment[]; overdue: OverduePayment[] };
  /** The payments the service could not be asked about, with the error saying why. */
  readonly unreachable: Unreachable[];
  /** Those of them still watched: their try is given back. */
  readonly givenBack: WatchedPayment[];
}

/** One run: takes the overdue payments, asks the service about each, then settles, keeps or reports each. */
export async function runOnce<C>(settings: RunSettings<C>): Promise<WatchRunReport> {
  const at = settings.now();
  const taken = await settings.calls.take(at, at + settings.retryAfterMs, settings.batchSize);
  if (taken.length === 0) return { settled: [], watching: [], overdue: [] };
  const skipped = new Set<string>();
  const results = await ask(settings, taken, at, skipped);
  const run: Run = { report: { settled: [], watching: [], overdue: [] }, unreachable: [], givenBack: [] };
  const decided: Decided[] = taken.map((payment, index) => ({
    payment,
    result: results[index]!,
    verdict: verdictOf(results[index]!, payment, settings, at),
    skipped: skipped.has(entryId(payment.orderId, payment.operation)),
  }));
  try {
    // Those kept and their give back first: a remove failing cannot leave their tries and unreachableSince lost.
    for (const d of decided.filter((d) => STAYING.has(d.verdict))) await decide(settings, run, d, at);
    if (run.givenBack.length > 0) await settings.calls.giveBack(run.givenBack);
    for (const d of decided.filter((d) => !STAYING.has(d.verdict))) await decide(settings, run, d, at);
  } finally {
    // A store failing mid-run must not lose the reports of the payments it already stopped watching.
    reportOverdue(run.report.overdue, settings);
    reportUnreachable(run.unreachable, settings);
  }
  return run.report;
}

async function ask<C>(
  settings: RunSettings<C>,
  taken: readonly WatchedPayment[],
  at: number,
  skipped: Set<string>,
): Promise<readonly ReconcileResult[]> {
  const reconciler = createReconciler<C>({
    ...(settings.webhook ? { webhook: settings.webhook } : {}),
    ...(settings.context !== undefined ? { context: settings.context } : {}),
    api: stopping(settings.api, skipped, settings.resendTimeoutMs),
    listPending: () =>
      taken.map((p) => ({ orderId: p.orderId, operation: p.operation, createdAt: p.createdAt })),
    now: () => at,
    requestsPerSecond: settings.requestsPerSecond,
  });
  return (await reconciler.run()).results;
}

/**
 * The client a run asks through: after `STOP_AFTER` unreachable answers in a row it asks no more, each call after
 * failing at once with the last of them (still paced by `requestsPerSecond`, no request sent), its payment noted
 * in `skipped`; any other answer starts the count again. Each call is bounded by `timeoutMs` (`api.timeout`): a
 * custom `ResendClient` that never settles must not hold the run, and every run joined to it, forever.
 */
function stopping(api: ResendClient, skipped: Set<string>, timeoutMs: number): ResendClient {
  let inARow = 0;
  let last: Error | undefined;
  const resend = async (request: ResendRequest) => {
    if (last !== undefined && inARow >= STOP_AFTER) {
      skipped.add(entryId(request.orderId, request.operation ?? 'purchase'));
      throw last;
    }
    try {
      const late = () =>
        new ApiError(
          'api.timeout',
          `re-send of ${request.operation ?? 'purchase'} for an order: no answer within ${timeoutMs} ms (the watch's resendTimeoutMs). The payment stays watched, no try counted.`,
        );
      const answer = await withDeadline(Promise.resolve(api.resend(request)), timeoutMs, late);
      inARow = 0;
      return answer;
    } catch (error) {
      inARow = isUnreachable(error) ? inARow + 1 : 0;
      if (inARow > 0) last = error as Error;
      throw error;
    }
  };
  return { ...(api.posId !== undefined ? { posId: api.posId } : {}), resend };
}

/** A payment taken by a run, with the service's answer and what it means for the payment. */
interface Decided {
  readonly payment: WatchedPayment;
  readonly result: ReconcileResult;
  readonly verdict: Verdict;
  /** Not asked at all: the run had stopped asking (`STOP_AFTER`). */
  readonly skipped: boolean;
}

/** One payment's place in the report; a settled or reported one leaves the store. */
async function decide<C>(settings: RunSettings<C>, run: Run, decided: Decided, at: number): Promise<void> {
  const { payment, result, verdict, skipped } = decided;
  if (result.error && (verdict === 'unreachable' || verdict === 'api_unreachable')) {
    run.unreachable.push({ payment, error: result.error, skipped, reported: verdict === 'api_unreachable' });
  }
  if (verdict === 'watching') return void run.report.watching.push(payment);
  if (verdict === 'unreachable' || verdict === 'held') {
    const { unreachableSince, ...rest } = payment;
    // Held: the service answered, so it was reachable; our own store failed to take the answer.
    const since = verdict === 'held' ? undefined : (unreachableSince ?? at);
    const kept = {
      ...rest,
      tries: payment.tries - 1,
      ...(since === undefined ? {} : { unreachableSince: since }),
    };
    // A held run reached the service: its give-back must not promote the unreachableSince an older run left
    // pending, so it gives back as a take older than the latest would (a deadline no entry has).
    run.givenBack.push(verdict === 'held' ? { ...kept, deadline: REACHED } : kept);
    return void run.report.watching.push(kept);
  }
  const overdue = verdict === 'settled' ? undefined : overdueOf(payment, result, verdict);
  // A remove that lands after storeTimeoutMs still reports the payment it dropped.
  const late = overdue && ((removed: boolean) => removed && reportOverdue([overdue], settings));
  const removed = await settings.calls.remove(payment.orderId, payment.operation, late);
  // Gone already: its final notification (the webhook the re-send asked for) settled it during the run.
  if (overdue === undefined || !removed) run.report.settled.push(payment);
  else run.report.overdue.push(overdue);
}

type Verdict = 'settled' | 'watching' | 'unreachable' | 'held' | OverdueReason;

/** The deadline a give-back from a run that reached the service carries: never an entry's (`WatchStore.giveBack`). */
const REACHED = -1;

/** The verdicts that keep a payment watched (no remove). */
const STAYING: ReadonlySet<Verdict> = new Set<Verdict>(['watching', 'unreachable', 'held']);

/** Codes of `webhook.process` failing on our own side (the merchant's store or queue down): not the service's answer. */
const OUR_OUTAGE = new Set(['store.unavailable', 'queue.unavailable']);

/** Codes of a call that never reached the service, or that it could not answer: nothing was learned. */
const UNREACHABLE = new Set(['api.network', 'api.timeout', 'api.server']);

function isUnreachable(error: unknown): boolean {
  const { code, status } = (error ?? {}) as { code?: unknown; status?: unknown };
  return UNREACHABLE.has(code as string) || status === 429;
}

/**
 * `applied` means the handlers took a final record (or had already); an order the service does not know is
 * reported at once, never tried again; a service that could not be asked costs no try, until every run for
 * `unreachableAfterMs` since the first failed (`unreachableSince`); an answer our own store or queue could not
 * take (`store.unavailable`, `queue.unavailable`) costs no try either; anything else is watched until `maxTries`.
 */
function verdictOf(
  result: ReconcileResult,
  payment: WatchedPayment,
  settings: Pick<RunSettings<unknown>, 'maxTries' | 'unreachableAfterMs'>,
  at: number,
): Verdict {
  if (result.status === 'applied') return 'settled';
  const { code } = (result.error ?? {}) as { code?: unknown };
  if (result.status === 'failed' && code === 'api.not_found') return 'unknown_order';
  if (result.status === 'failed' && OUR_OUTAGE.has(code as string)) return 'held';
  if (result.status === 'failed' && isUnreachable(result.error)) {
    const since = payment.unreachableSince ?? at;
    return at - since >= settings.unreachableAfterMs ? 'api_unreachable' : 'unreachable';
  }
  if (result.status === 'given_up' || payment.tries >= settings.maxTries) return 'unsettled';
  return 'watching';
}

function overdueOf(payment: WatchedPayment, result: ReconcileResult, reason: OverdueReason): OverduePayment {
  const code = (result.error as { code?: unknown } | undefined)?.code;
  return {
    orderId: payment.orderId,
    operation: payment.operation,
    createdAt: new Date(payment.createdAt),
    // The run that could not reach the service asked it nothing.
    tries: reason === 'api_unreachable' ? payment.tries - 1 : payment.tries,
    reason,
    lastResult: result.status,
    ...(result.paymentStatus !== undefined ? { paymentStatus: result.paymentStatus } : {}),
    ...(typeof code === 'string' ? { errorCode: code } : {}),
  };
}
