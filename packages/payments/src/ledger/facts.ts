import type { ChargeState, ConflictReason, PaymentState, SubscriptionStatus } from './entry.js';
import type { LedgerFact } from './fact.js';

// The consistent set of facts of one payment, and whether a new fact adds to it, repeats it or contradicts it: the
// rows of the table of transitions (docs/assumptions.md), one method and status at a time.

export interface Charge {
  pending: boolean;
  paid?: number | null;
  failed: boolean;
}

/** The consistent set of facts of one payment: what the state is derived from. */
export class Facts {
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

export const SUBSCRIPTION: readonly SubscriptionStatus[] = ['init', 'active', 'canceled'];

type Considered =
  | { readonly kind: 'apply'; readonly apply: (facts: Facts) => void; readonly known: boolean }
  | { readonly kind: 'known' }
  | { readonly kind: 'news'; readonly unknown?: string }
  | { readonly kind: 'conflict'; readonly reason: ConflictReason };

/** Whether `fact` adds to `facts`, repeats them, or contradicts them; and how it adds. */
export function consider(facts: Facts, fact: LedgerFact): Considered {
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

export function chargeState(charge: Charge | undefined): ChargeState {
  if (charge === undefined) return 'new';
  if (charge.failed) return 'failed';
  if (charge.paid !== undefined) return 'paid';
  return charge.pending ? 'pending' : 'new';
}

export function sum(values: Iterable<number>): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}
