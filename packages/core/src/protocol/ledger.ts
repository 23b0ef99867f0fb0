import { publishLedger } from '../diagnostics/channels.js';
import { StoreError } from '../errors.js';
import type { Notification } from '../notification/types.js';
import type { Delivery } from './delivery.js';
import type { ExactlyOnce } from './exactly-once.js';
import { type Outcome, type Route, runRoute, type Work } from './routes.js';

/**
 * What a ledger decides about a notification once it recorded it. `handle`: the handlers run. `stale` (earlier in
 * the payment's cycle than what the ledger holds) and `conflict` (it contradicts what the ledger holds: a failure
 * after a success): no handler runs and the answer is 200 with that outcome (the service must not retry a
 * notification that was recorded). `after` runs once the handlers succeeded (alone when none ran), under the same
 * claim: the ledger's own listeners (transitions, conflicts).
 *
 * @example
 * const decision: LedgerDecision = { outcome: 'stale' };
 */
export interface LedgerDecision {
  /** `handle`: the handlers run; `stale`, `conflict`: none runs, and the answer is 200 with that outcome. */
  readonly outcome: 'handle' | 'stale' | 'conflict';
  /** Runs after the handlers (alone for `stale` and `conflict`), under the same claim; a throw fails the run (500). */
  readonly after?: (delivery: Delivery) => unknown;
}

/**
 * What `createWebhookHandler({ ledger })` takes: a record of what each payment is (`createPaymentLedger` of
 * `@payhook/payments` builds one). `record` is called once the delivery holds its claim, before any handler, and
 * again when a failed run is redelivered: it must be idempotent by `delivery.key` (the same delivery recorded twice
 * decides the same). With a transactional store (`PostgresInbox`) it is called inside the claim's transaction
 * (`delivery.transaction`), so its writes commit or roll back with the claim and the handlers' own writes. A
 * `record` that throws is answered 503 `store.unavailable` (nothing ran; the service's retry is safe).
 *
 * @example
 * const ledger: WebhookLedger = {
 *   name: 'audit',
 *   record: (notification) => ({ outcome: notification.status === 'pending' ? 'handle' : 'handle' }),
 * };
 * createWebhookHandler({ secret, ledger });
 */
export interface WebhookLedger {
  /** Named in errors when it fails. */
  readonly name: string;
  /** Records the notification (idempotent by `delivery.key`) and answers what to do with it. */
  record(notification: Notification, delivery: Delivery): LedgerDecision | Promise<LedgerDecision>;
}

/** What a ledgered run came to: `handle`, or the outcome answered instead of the handlers'. */
interface Ledgered<C> {
  /** One route that records, then runs `handlers` (or not) and the decision's `after`. */
  readonly route: Route<C>;
  /** The decision of the run, once it ran (a duplicate never runs it). */
  decided(): LedgerDecision['outcome'] | undefined;
}

/**
 * The handlers of one run behind the ledger: one route (so a redelivery after a failure records again, which the
 * ledger answers as before, then runs them all again), whose decision the processor reads back for the answer.
 */
function ledgered<C>(ledger: WebhookLedger, handlers: readonly Route<C>[]): Ledgered<C> {
  let outcome: LedgerDecision['outcome'] | undefined;
  const route: Route<C> = {
    id: `ledger#${ledger.name}`,
    run: async (notification, context, delivery) => {
      let decision: LedgerDecision;
      try {
        decision = await ledger.record(notification, delivery);
      } catch (cause) {
        throw ledgerUnavailable(ledger.name, cause);
      }
      outcome = decision.outcome;
      if (outcome !== 'handle') publishLedger(outcome, notification.method);
      const work = { notification, context, key: delivery.key, handlers, delivery, caller: undefined };
      if (outcome === 'handle')
        for (const handler of handlers) await runRoute(handler, work as never, delivery);
      await decision.after?.(delivery);
    },
  };
  return { route, decided: () => outcome };
}

const failures = new WeakSet<object>();

function ledgerUnavailable(name: string, cause: unknown): StoreError {
  const error = new StoreError(
    'store.unavailable',
    `the ledger (${name}) could not record the notification; nothing ran, so the service's retry is safe.`,
    { cause },
  );
  failures.add(error);
  return error;
}

/** The ledger's own failure out of a run (wrapped as the route's `handler.failed`), answered 503 instead. */
function unwrapLedgerFailure(error: unknown): unknown {
  const cause = (error as { cause?: unknown } | null)?.cause;
  return typeof cause === 'object' && cause !== null && failures.has(cause) ? cause : error;
}

/**
 * The runs behind the ledger: the one of the notification's own key records it (a worker's queued part, under
 * `key#queued`, was recorded by the request's inline part); a stale or conflicting decision ends there.
 */
export async function runLedgered<C>(
  ledger: WebhookLedger,
  works: readonly Work<C>[],
  key: string | undefined,
  once: ExactlyOnce<C>,
): Promise<Outcome | 'stale' | 'conflict'> {
  let outcome: Outcome = 'duplicate';
  for (const work of works) {
    const recording: Ledgered<C> | undefined = work.key === key ? ledgered(ledger, work.handlers) : undefined;
    let ran: Outcome;
    try {
      // The outbox's job (`within`, after the handlers in the inline part's transaction) only for a notification
      // the ledger let through: a stale one's queued part must not run in a worker either.
      const { within } = work;
      const gated = within && recording && { within: (tx: unknown) => gatedWithin(recording, within, tx) };
      ran = await once.run(recording ? { ...work, ...gated, handlers: [recording.route] } : work);
    } catch (error) {
      throw unwrapLedgerFailure(error);
    }
    const decided = recording?.decided();
    if (decided === 'stale' || decided === 'conflict') return decided;
    if (ran === 'handled') outcome = 'handled';
  }
  return outcome;
}

function gatedWithin<C>(
  recording: Ledgered<C>,
  within: (transaction: unknown) => Promise<unknown>,
  transaction: unknown,
): Promise<unknown> {
  return recording.decided() === 'handle' ? within(transaction) : Promise.resolve();
}
