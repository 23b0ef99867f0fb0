import {
  fakeAuth,
  fakeCredit,
  fakeLookup,
  fakeP2p,
  fakePurchase,
  fakeRecurringCharge,
} from '../fixtures/primary.js';
import { fakeCapture, fakeRefund, fakeVoid } from '../fixtures/secondary.js';
import { changeableAmount, failure, threeDsPending } from '../fixtures/states.js';
import type { FakeNotification, FakePrimary } from '../fixtures/wire.js';
import { didYouMean } from './suggest.js';

/**
 * What links an event to others: the payment a capture, void or refund acts on (`--of`), the subscription and
 * the charge number of a recurring charge (`--subscription`, `--count`).
 */
export interface EventLink {
  of?: FakePrimary;
  subscription?: string;
  charge?: number;
}

type Build = (seed: string | undefined, link: EventLink) => FakeNotification;

const secondary = (link: EventLink) => (link.of ? { of: link.of } : {});
const charge = (seed: string | undefined, link: EventLink) =>
  fakeRecurringCharge(
    link.subscription === undefined ? {} : { recurring: { id: link.subscription, status: 'active' } },
    { seed: seed ?? link.subscription, ...(link.charge !== undefined ? { charge: link.charge } : {}) },
  );

/** The events `payhook send` knows, each a builder and state. */
export const EVENTS: Readonly<Record<string, Build>> = {
  'purchase.success': (seed) => fakePurchase({}, { seed }),
  'purchase.pending-3ds': (seed) => threeDsPending(fakePurchase({}, { seed })),
  'purchase.failure': (seed) => failure(fakePurchase({}, { seed })),
  'purchase.changeable-amount': (seed) => changeableAmount(fakePurchase({}, { seed })),
  'auth.success': (seed) => fakeAuth({}, { seed }),
  'auth.pending-3ds': (seed) => threeDsPending(fakeAuth({}, { seed })),
  'auth.failure': (seed) => failure(fakeAuth({}, { seed })),
  'credit.success': (seed) => fakeCredit({}, { seed }),
  'p2p.success': (seed) => fakeP2p({}, { seed }),
  'lookup.success': (seed) => fakeLookup({}, { seed }),
  'capture.success': (seed, link) => fakeCapture({}, { seed, ...secondary(link) }),
  'capture.failure': (seed, link) => failure(fakeCapture({}, { seed, ...secondary(link) })),
  'void.success': (seed, link) => fakeVoid({}, { seed, ...secondary(link) }),
  'refund.success': (seed, link) => fakeRefund({}, { seed, ...secondary(link) }),
  'refund.failure': (seed, link) => failure(fakeRefund({}, { seed, ...secondary(link) })),
  'recurring.charge': (seed, link) => charge(seed, link),
  'recurring.failure': (seed, link) => failure(charge(seed, link)),
};

/** Events whose notification acts on another payment (`--of`). */
export const SECONDARY_EVENTS: ReadonlySet<string> = new Set(
  Object.keys(EVENTS).filter((name) => /^(capture|void|refund)\./.test(name)),
);

/** A status-less name means its success (`refund` → `refund.success`, `recurring` → `recurring.charge`). */
export function resolveEvent(name: string): string | undefined {
  if (name.includes('.')) return name in EVENTS ? name : undefined;
  return [`${name}.success`, `${name}.charge`].find((full) => full in EVENTS);
}

/** Every name `payhook send` accepts, full and short. */
function eventNames(): string[] {
  const full = Object.keys(EVENTS);
  return [...full, ...new Set(full.map((name) => name.split('.')[0]!))];
}

/** ` Did you mean "purchase.success"?` for a misspelt event, or ''. */
export function suggestEvent(name: string): string {
  return didYouMean(name, eventNames());
}
