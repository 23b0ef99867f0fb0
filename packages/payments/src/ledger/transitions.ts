import type {
  ChargeEntry,
  ChargeState,
  DeliveryCause,
  FactDecision,
  LedgerConflict,
  PaymentEntry,
  PaymentState,
  SubscriptionStatus,
  Transition,
} from './entry.js';
import { type LedgerFact, majorUnits } from './fact.js';
import { chargeState, consider, Facts, SUBSCRIPTION, sum } from './facts.js';

// The ledger's table of transitions (docs/assumptions.md: the spec shows none). A payment's state is a function of
// the set of facts recorded about it, never of their order: each fact only adds to that set (a fact contradicting it
// is a conflict, kept aside), and every state a set can give is at or past the state of any smaller set. So however
// the deliveries overtake each other, the state only moves forward and ends where the in-order one ends; the
// transitions a fact fires are the steps between the state before it and after it, those it implies included.

const AUTH_CHAIN: readonly PaymentState[] = [
  'new',
  'pending',
  'authorized',
  'paid',
  'partially_refunded',
  'refunded',
];
const PURCHASE_CHAIN: readonly PaymentState[] = ['new', 'pending', 'paid', 'partially_refunded', 'refunded'];

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
