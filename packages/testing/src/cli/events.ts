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
import type { FakeNotification } from '../fixtures/wire.js';

type Build = (seed: string | undefined) => FakeNotification;

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
  'capture.success': (seed) => fakeCapture({}, { seed }),
  'capture.failure': (seed) => failure(fakeCapture({}, { seed })),
  'void.success': (seed) => fakeVoid({}, { seed }),
  'refund.success': (seed) => fakeRefund({}, { seed }),
  'refund.failure': (seed) => failure(fakeRefund({}, { seed })),
  'recurring.charge': (seed) => fakeRecurringCharge({}, { seed }),
  'recurring.failure': (seed) => failure(fakeRecurringCharge({}, { seed })),
};

/** A status-less name means its success (`refund` → `refund.success`, `recurring` → `recurring.charge`). */
export function eventBuilder(name: string): Build | undefined {
  if (name.includes('.')) return EVENTS[name];
  return EVENTS[`${name}.success`] ?? EVENTS[`${name}.charge`];
}
