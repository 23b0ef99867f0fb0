import { type LedgerFact, majorUnits } from './fact.js';

// The ledger's table of transitions (docs/assumptions.md: the spec shows none). A payment's state is a function of
// the set of facts recorded about it, never of their order: each fact only adds to that set (a fact contradicting it
// is a conflict, kept aside), and every state a set can give is at or past the state of any smaller set. So however
// the deliveries overtake each other, the state only moves forward and ends where the in-order one ends; the
// transitions a fact fires are the steps between the state before it and after it, those it implies included.

/**
 * Where a payment stands. `new`: nothing known moved it yet (only unknown statuses, or nothing). `failed`, `voided`
 * and `refunded` are final.
 */
export type PaymentState =
  | 'new'
  | 'pending'
  | 'authorized'
  | 'paid'
  | 'failed'
  | 'voided'
  | 'partially_refunded'
  | 'refunded';

/** A subscription's charge (one `transaction_id`): a failed charge and a later successful one are two charges. */
export type ChargeState = 'new' | 'pending' | 'paid' | 'failed';

/** A subscription's own status (spec 3.2); `canceled` is final. */
export type SubscriptionStatus = 'init' | 'active' | 'canceled';

/** What moved: the payment, one charge of its subscription, or the subscription. */
export type TransitionSubject = 'payment' | 'charge' | 'subscription';

/**
 * One step of a payment's state, fired once, by the delivery whose notification caused it.
 *
 * @example
 * ledger.onTransition('paid', (t) => fulfil(t.orderId));
 */
export interface Transition {
  readonly orderId: string;
  readonly subject: TransitionSubject;
  /** The charge's `transaction_id`, for a charge. */
  readonly chargeId?: string;
  readonly from: PaymentState | ChargeState | SubscriptionStatus | 'new';
  readonly to: PaymentState | ChargeState | SubscriptionStatus;
  /** A refund this step records (`from` may equal `to`: a second partial refund), by its `operation_id`. */
  readonly refund?: { readonly operationId: string; readonly amount: number };
  /** The ledger's version once the fact was recorded: its position in the payment's log, from 1. */
  readonly version: number;
  /** The delivery that caused it: its key, method and status. */
  readonly cause: DeliveryCause;
  /** `true` for a state the notification implies without saying it (a refund before its payment's success). */
  readonly implied: boolean;
}

/** A delivery, as the ledger's history names it. */
export interface DeliveryCause {
  readonly key: string;
  readonly method: string;
  readonly status: string;
  readonly operationId?: string;
  readonly chargeId?: string;
  readonly at: number;
}

/** Why a notification was a conflict. */
export type ConflictReason =
  | 'failure_after_success'
  | 'success_after_failure'
  | 'refund_above_paid'
  | 'void_after_capture'
  | 'operation_after_void';

/**
 * A notification that contradicts what the ledger holds: recorded, the state not moved, handed to `onConflict`.
 *
 * @example
 * createPaymentLedger({ onConflict: (c) => alert(`${c.orderId}: ${c.reason}`) });
 */
export interface LedgerConflict {
  readonly orderId: string;
  readonly reason: ConflictReason;
  /** The state it would have contradicted (it stays). */
  readonly state: PaymentState;
  readonly cause: DeliveryCause;
  /** The operation to ask the service to re-send (spec 4.3), and the charge for a subscription's (4.4). */
  readonly operation: string;
  readonly chargeId?: string;
}

/** What one recorded fact came to. `news`: no state moved, but it is not earlier than the state (an unknown status). */
export interface FactDecision {
  readonly verdict: 'moved' | 'stale' | 'news' | 'conflict';
  readonly transitions: readonly Transition[];
  readonly conflict?: LedgerConflict;
}

/** A charge of a subscription, as `get` answers it. */
export interface ChargeEntry {
  readonly state: ChargeState;
  readonly amount?: number;
}

/**
 * A payment as the ledger holds it.
 *
 * @example
 * const { state, refundedAmount, version } = await ledger.get('order-1');
 */
export interface PaymentEntry {
  readonly orderId: string;
  readonly state: PaymentState;
  /** How many notifications were recorded (each delivery once): grows by one with each. */
  readonly version: number;
  readonly currency?: string;
  /** A purchase's amount, or what the captures summed to. */
  readonly paidAmount?: number;
  readonly authorizedAmount?: number;
  readonly capturedAmount: number;
  readonly refundedAmount: number;
  /** Each refund once, by its `operation_id` (a refund delivered twice counts once). */
  readonly refunds: Readonly<Record<string, number>>;
  readonly captures: Readonly<Record<string, number>>;
  /** A subscription's charges by `transaction_id`. */
  readonly charges: Readonly<Record<string, ChargeEntry>>;
  readonly subscription?: { readonly id?: string; readonly status: SubscriptionStatus };
  /** Statuses the ledger does not know, as received, each once: kept, the state not moved. */
  readonly unknownStatuses: readonly string[];
  /** Every transition, in the order it fired, with the delivery that caused it. */
  readonly history: readonly Transition[];
  readonly conflicts: readonly LedgerConflict[];
  /** Every delivery recorded, in order, with what the ledger decided. */
  readonly deliveries: readonly (DeliveryCause & { readonly verdict: FactDecision['verdict'] })[];
}

interface Charge {
  pending: boolean;
  paid?: number | null;
  failed: boolean;
}

/** The consistent set of facts of one payment: what the state is derived from. */
class Facts {
  auth = false;
  pending = false;
  failed = false;
  authorized?: number | null;
  purchased?: number | null;
  readonly captures = new Map<string, number>();
  readonly voids = new Set<string>();
  readonly refunds = new Map<string, number>();
  readonly charges = new Map<string, Charge>();
  subscription?: { id?: string; rank: number };
  currency?: string;
  readonly unknown: string[] = [];

  get succeeded(): boolean {
    return (
      this.authorized !== undefined ||
      this.purchased !== undefined ||
      this.captures.size > 0 ||
      this.voids.size > 0 ||
      this.refunds.size > 0
    );
  }

  /** What was paid: a purchase's amount, the captures', or a subscription's paid charges'; unknown before. */
  get total(): number | undefined {
    if (this.purchased !== undefined) return this.purchased ?? undefined;
    if (this.captures.size > 0) return sum(this.captures.values());
    const paid = [...this.charges.values()].filter((c) => c.paid !== undefined);
    if (paid.length === 0 || paid.some((c) => c.paid === null)) return undefined;
    return sum(paid.map((c) => c.paid as number));
  }

  state(): PaymentState {
    if (this.failed) return 'failed';
    if (this.voids.size > 0) return 'voided';
    const charges = [...this.charges.values()];
    if (this.refunds.size > 0) {
      const total = this.total;
      return total !== undefined && sum(this.refunds.values()) >= total ? 'refunded' : 'partially_refunded';
    }
    if (this.purchased !== undefined || this.captures.size > 0 || charges.some((c) => c.paid !== undefined)) {
      return 'paid';
    }
    if (this.authorized !== undefined) return 'authorized';
    if (this.pending || charges.some((c) => c.pending)) return 'pending';
    return 'new';
  }
}

const SUBSCRIPTION: readonly SubscriptionStatus[] = ['init', 'active', 'canceled'];
const AUTH_CHAIN: readonly PaymentState[] = [
  'new',
  'pending',
  'authorized',
  'paid',
  'partially_refunded',
  'refunded',
];
const PURCHASE_CHAIN: readonly PaymentState[] = ['new', 'pending', 'paid', 'partially_refunded', 'refunded'];

type Considered =
  | { readonly kind: 'apply'; readonly apply: (facts: Facts) => void; readonly known: boolean }
  | { readonly kind: 'known' }
  | { readonly kind: 'news'; readonly unknown?: string }
  | { readonly kind: 'conflict'; readonly reason: ConflictReason };

/** Whether `fact` adds to `facts`, repeats them, or contradicts them; and how it adds. */
function consider(facts: Facts, fact: LedgerFact): Considered {
  if (fact.d === 'p' && fact.t !== undefined) return considerCharge(facts, fact, fact.t);
  if (fact.d === 'p') return considerPayment(facts, fact);
  if (fact.d === 's' && fact.s === 'success') return considerOperation(facts, fact);
  return { kind: 'news', unknown: fact.d === 'o' || KNOWN.has(fact.s) ? undefined : fact.s };
}

const KNOWN = new Set(['pending', 'success', 'failure']);
const amountOf = (fact: LedgerFact): number | null => fact.a ?? null;

function considerPayment(facts: Facts, fact: LedgerFact): Considered {
  const auth = fact.m === 'auth';
  switch (fact.s) {
    case 'pending':
      return facts.pending
        ? { kind: 'known' }
        : {
            kind: 'apply',
            known: true,
            apply: (f) => {
              f.pending = true;
              f.auth ||= auth;
            },
          };
    case 'success': {
      if (facts.failed) return { kind: 'conflict', reason: 'success_after_failure' };
      const seen = auth ? facts.authorized : facts.purchased;
      if (seen !== undefined) return { kind: 'known' };
      const amount = amountOf(fact);
      if (!auth && amount !== null && facts.refunds.size > 0 && sum(facts.refunds.values()) > amount) {
        return { kind: 'conflict', reason: 'refund_above_paid' };
      }
      return {
        kind: 'apply',
        known: true,
        apply: (f) => {
          if (auth) {
            f.authorized = amount;
            f.auth = true;
          } else f.purchased = amount;
        },
      };
    }
    case 'failure':
      if (facts.succeeded) return { kind: 'conflict', reason: 'failure_after_success' };
      return facts.failed
        ? { kind: 'known' }
        : {
            kind: 'apply',
            known: true,
            apply: (f) => {
              f.failed = true;
            },
          };
    default:
      return { kind: 'news', unknown: fact.s };
  }
}

function considerOperation(facts: Facts, fact: LedgerFact): Considered {
  const op = fact.o ?? fact.k;
  const amount = fact.a ?? 0;
  switch (fact.m) {
    case 'capture':
      if (facts.captures.has(op)) return { kind: 'known' };
      if (facts.failed) return { kind: 'conflict', reason: 'success_after_failure' };
      if (facts.voids.size > 0) return { kind: 'conflict', reason: 'operation_after_void' };
      return {
        kind: 'apply',
        known: true,
        apply: (f) => {
          f.captures.set(op, amount);
          f.auth = true;
        },
      };
    case 'void':
      if (facts.voids.has(op)) return { kind: 'known' };
      if (facts.failed) return { kind: 'conflict', reason: 'success_after_failure' };
      if (facts.captures.size > 0 || facts.refunds.size > 0 || facts.purchased !== undefined) {
        return { kind: 'conflict', reason: 'void_after_capture' };
      }
      return {
        kind: 'apply',
        known: true,
        apply: (f) => {
          f.voids.add(op);
          f.auth = true;
        },
      };
    case 'refund': {
      if (facts.refunds.has(op)) return { kind: 'known' };
      if (facts.failed) return { kind: 'conflict', reason: 'success_after_failure' };
      if (facts.voids.size > 0) return { kind: 'conflict', reason: 'operation_after_void' };
      const total = facts.total;
      if (total !== undefined && sum(facts.refunds.values()) + amount > total) {
        return { kind: 'conflict', reason: 'refund_above_paid' };
      }
      return { kind: 'apply', known: true, apply: (f) => void f.refunds.set(op, amount) };
    }
    default:
      return { kind: 'news' };
  }
}

function considerCharge(facts: Facts, fact: LedgerFact, id: string): Considered {
  const charge = facts.charges.get(id) ?? { pending: false, failed: false };
  const rank = SUBSCRIPTION.indexOf(fact.r as SubscriptionStatus);
  const moves = rank >= 0 && (facts.subscription === undefined || rank > facts.subscription.rank);
  const subscribe = (f: Facts) => {
    if (moves) f.subscription = { id: fact.ri ?? f.subscription?.id, rank };
    else if (f.subscription === undefined && fact.ri !== undefined)
      f.subscription = { id: fact.ri, rank: -1 };
  };
  const withCharge = (change: (c: Charge) => void) => (f: Facts) => {
    const next = { ...(f.charges.get(id) ?? { pending: false, failed: false }) };
    change(next);
    f.charges.set(id, next);
    subscribe(f);
  };
  const known = (): Considered =>
    moves ? { kind: 'apply', known: true, apply: subscribe } : { kind: 'known' };
  switch (fact.s) {
    case 'pending':
      return charge.pending
        ? known()
        : {
            kind: 'apply',
            known: true,
            apply: withCharge((c) => {
              c.pending = true;
            }),
          };
    case 'success':
      if (charge.failed) return { kind: 'conflict', reason: 'success_after_failure' };
      if (charge.paid !== undefined) return known();
      return {
        kind: 'apply',
        known: true,
        apply: withCharge((c) => {
          c.paid = amountOf(fact);
        }),
      };
    case 'failure':
      if (charge.paid !== undefined) return { kind: 'conflict', reason: 'failure_after_success' };
      return charge.failed
        ? known()
        : {
            kind: 'apply',
            known: true,
            apply: withCharge((c) => {
              c.failed = true;
            }),
          };
    default:
      return { kind: 'apply', known: false, apply: subscribe };
  }
}

function chargeState(charge: Charge | undefined): ChargeState {
  if (charge === undefined) return 'new';
  if (charge.failed) return 'failed';
  if (charge.paid !== undefined) return 'paid';
  return charge.pending ? 'pending' : 'new';
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

/** The payment's steps from `from` to `to`: the target, and the states on the way it implies (authorized, paid). */
function paymentPath(
  from: PaymentState,
  to: PaymentState,
  auth: boolean,
): { state: PaymentState; implied: boolean }[] {
  if (from === to) return [];
  if (to === 'failed') return [{ state: to, implied: false }];
  const chain = auth ? AUTH_CHAIN : PURCHASE_CHAIN;
  if (to === 'voided') {
    const before = chain.indexOf(from) < chain.indexOf('authorized');
    return [
      ...(before ? [{ state: 'authorized' as const, implied: true }] : []),
      { state: to, implied: false },
    ];
  }
  const start = chain.indexOf(from);
  return chain
    .slice(start + 1, chain.indexOf(to) + 1)
    .filter((state) => state === to || state === 'authorized' || state === 'paid')
    .map((state) => ({ state, implied: state !== to }));
}

/** The log of one payment folded: its entry, and what each fact came to (by position). */
export interface Replayed {
  readonly entry: PaymentEntry;
  readonly decisions: readonly FactDecision[];
}

/**
 * Folds a payment's log in the order the store recorded it: the same log gives the same entry and the same
 * decisions on every instance, which is how a transition is fired once, by the delivery whose fact caused it.
 */
export function replay(orderId: string, log: readonly LedgerFact[]): Replayed {
  const facts = new Facts();
  const decisions: FactDecision[] = [];
  const history: Transition[] = [];
  const conflicts: LedgerConflict[] = [];
  const deliveries: (DeliveryCause & { verdict: FactDecision['verdict'] })[] = [];
  let operation = 'purchase';
  log.forEach((fact, index) => {
    facts.currency ??= fact.c;
    if (fact.d === 'p' && fact.t === undefined) operation = fact.m;
    const cause = causeOf(fact);
    const considered = consider(facts, fact);
    let decision: FactDecision;
    if (considered.kind === 'conflict') {
      const conflict: LedgerConflict = {
        orderId,
        reason: considered.reason,
        state: facts.state(),
        cause,
        operation: fact.d === 'p' ? fact.m : operation,
        ...(fact.t === undefined ? {} : { chargeId: fact.t }),
      };
      conflicts.push(conflict);
      decision = { verdict: 'conflict', transitions: [], conflict };
    } else if (considered.kind === 'apply') {
      const before = snapshot(facts);
      considered.apply(facts);
      const transitions = stepsBetween(orderId, before, snapshot(facts), facts, fact, index + 1, cause);
      history.push(...transitions);
      const verdict = transitions.length > 0 ? 'moved' : considered.known ? 'stale' : 'news';
      decision = { verdict, transitions };
    } else {
      if (considered.kind === 'news' && considered.unknown && !facts.unknown.includes(considered.unknown)) {
        facts.unknown.push(considered.unknown);
      }
      decision = { verdict: considered.kind === 'known' ? 'stale' : 'news', transitions: [] };
    }
    decisions.push(decision);
    deliveries.push({ ...cause, verdict: decision.verdict });
  });
  return { entry: entryOf(orderId, facts, log.length, history, conflicts, deliveries), decisions };
}

interface Snapshot {
  readonly state: PaymentState;
  readonly charges: ReadonlyMap<string, ChargeState>;
  readonly subscription: SubscriptionStatus | undefined;
}

function snapshot(facts: Facts): Snapshot {
  const charges = new Map<string, ChargeState>();
  for (const [id, charge] of facts.charges) charges.set(id, chargeState(charge));
  const rank = facts.subscription?.rank ?? -1;
  return { state: facts.state(), charges, subscription: rank >= 0 ? SUBSCRIPTION[rank] : undefined };
}

function stepsBetween(
  orderId: string,
  before: Snapshot,
  after: Snapshot,
  facts: Facts,
  fact: LedgerFact,
  version: number,
  cause: DeliveryCause,
): Transition[] {
  const steps: Transition[] = [];
  const base = { orderId, version, cause };
  const refund =
    fact.d === 's' && fact.m === 'refund'
      ? { operationId: fact.o ?? fact.k, amount: majorUnits(fact.a ?? 0, facts.currency) }
      : undefined;
  let from: PaymentState = before.state;
  for (const { state, implied } of paymentPath(before.state, after.state, facts.auth)) {
    steps.push({ ...base, subject: 'payment', from, to: state, implied });
    from = state;
  }
  if (refund !== undefined) {
    const last = steps.at(-1);
    if (last !== undefined) steps[steps.length - 1] = { ...last, refund };
    else steps.push({ ...base, subject: 'payment', from, to: from, implied: false, refund });
  }
  for (const [id, to] of after.charges) {
    const was = before.charges.get(id) ?? 'new';
    if (was !== to) steps.push({ ...base, subject: 'charge', chargeId: id, from: was, to, implied: false });
  }
  if (after.subscription !== before.subscription && after.subscription !== undefined) {
    steps.push({
      ...base,
      subject: 'subscription',
      from: before.subscription ?? 'new',
      to: after.subscription,
      implied: false,
    });
  }
  return steps;
}

function causeOf(fact: LedgerFact): DeliveryCause {
  return {
    key: fact.k,
    method: fact.m,
    status: fact.s,
    ...(fact.o === undefined ? {} : { operationId: fact.o }),
    ...(fact.t === undefined ? {} : { chargeId: fact.t }),
    at: fact.at,
  };
}

function entryOf(
  orderId: string,
  facts: Facts,
  version: number,
  history: Transition[],
  conflicts: LedgerConflict[],
  deliveries: PaymentEntry['deliveries'],
): PaymentEntry {
  const major = (minor: number) => majorUnits(minor, facts.currency);
  const byOperation = (map: Map<string, number>) =>
    Object.fromEntries([...map].map(([id, minor]) => [id, major(minor)]));
  const charges: Record<string, ChargeEntry> = {};
  for (const [id, charge] of facts.charges) {
    const paid = charge.paid ?? undefined;
    charges[id] = { state: chargeState(charge), ...(paid === undefined ? {} : { amount: major(paid) }) };
  }
  const total = facts.total;
  const rank = facts.subscription?.rank ?? -1;
  return {
    orderId,
    state: facts.state(),
    version,
    ...(facts.currency === undefined ? {} : { currency: facts.currency }),
    ...(total === undefined ? {} : { paidAmount: major(total) }),
    ...(typeof facts.authorized === 'number' ? { authorizedAmount: major(facts.authorized) } : {}),
    capturedAmount: major(sum(facts.captures.values())),
    refundedAmount: major(sum(facts.refunds.values())),
    refunds: byOperation(facts.refunds),
    captures: byOperation(facts.captures),
    charges,
    ...(facts.subscription === undefined || rank < 0
      ? {}
      : { subscription: { id: facts.subscription.id, status: SUBSCRIPTION[rank]! } }),
    unknownStatuses: [...facts.unknown],
    history,
    conflicts,
    deliveries,
  };
}
