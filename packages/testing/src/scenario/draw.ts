import { createIdSource } from '../fake/ids.js';

/**
 * One delivery fault placed on one step of a scenario: the unit exploration draws and shrinking removes.
 * `step` is the index of a webhook-causing step; a `hold` holds the webhooks from that step on and releases them
 * newest first right after step `releaseAfter` (a reorder).
 *
 * @example
 * const faults: PlacedFault[] = [{ step: 0, kind: 'duplicate', copies: 1 }, { step: 1, kind: 'delay', ms: 60_000 }];
 */
export type PlacedFault =
  | { readonly step: number; readonly kind: 'duplicate'; readonly copies: number }
  | { readonly step: number; readonly kind: 'delay'; readonly ms: number }
  | { readonly step: number; readonly kind: 'hold'; readonly releaseAfter: number }
  | { readonly step: number; readonly kind: 'drop' };

/**
 * Where faults may go in one scenario: the indices of its webhook-causing steps, and how many steps it has (a hold
 * is released after any later step).
 *
 * @example
 * const space: FaultSpace = { steps: [0, 2, 3], length: 5 };
 */
export interface FaultSpace {
  readonly steps: readonly number[];
  readonly length: number;
}

/**
 * The kinds of fault exploration draws.
 *
 * @example
 * const reorders: FaultKind[] = ['hold', 'delay'];
 */
export type FaultKind = PlacedFault['kind'];

/** Every kind of fault, in the order a step's faults are listed. */
export const FAULT_KINDS: readonly FaultKind[] = ['drop', 'hold', 'duplicate', 'delay'];

/** Fake-clock delays drawn, shortest first: shrinking walks down this ladder. */
export const DELAY_LADDER: readonly number[] = [1_000, 60_000, 3_600_000];

/** The most copies a `duplicate` fault draws. */
const MOST_COPIES = 3;

/**
 * A seeded number source in [0, 1): run `run` of `seed` always draws the same sequence, and runs of one seed draw
 * unrelated ones (the run is mixed into the seed, not added to it).
 */
export function createDraws(seed: number, run: number): () => number {
  const mixed = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(run + 1, 0x85ebca6b)) >>> 0;
  const ids = createIdSource(mixed);
  return () => Number.parseInt(ids.hex(4), 16) / 2 ** 32;
}

/**
 * The fault set of run `run` of `seed` over `space`: each step may get a duplicate (1 to 3 copies) and a delay
 * (from `DELAY_LADDER`), or instead a drop (its first attempt lost, which the service's retry recovers); and about
 * one run in three holds the webhooks of one step until after a later step and releases them in reverse (a
 * reorder). Only the `kinds` given are kept, from the same draws. The same seed and run give the same faults; a
 * run may draw none.
 *
 * @example
 * drawFaults({ steps: [0, 1], length: 2 }, 42, 0); // the same list on every call
 */
export function drawFaults(
  space: FaultSpace,
  seed: number,
  run: number,
  kinds: readonly FaultKind[] = FAULT_KINDS,
): PlacedFault[] {
  const draw = createDraws(seed, run);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(draw() * items.length)]!;
  const faults: PlacedFault[] = [];
  for (const step of space.steps) {
    if (draw() < 0.1) {
      faults.push({ step, kind: 'drop' });
      continue;
    }
    if (draw() < 0.3) faults.push({ step, kind: 'duplicate', copies: 1 + Math.floor(draw() * MOST_COPIES) });
    if (draw() < 0.3) faults.push({ step, kind: 'delay', ms: pick(DELAY_LADDER) });
  }
  if (space.steps.length > 0 && draw() < 0.35) {
    const step = pick(space.steps);
    const later = Array.from({ length: space.length - step - 1 }, (_, i) => step + 1 + i);
    faults.push({ step, kind: 'hold', releaseAfter: later.length > 0 ? pick(later) : step });
  }
  return sortFaults(faults.filter((fault) => kinds.includes(fault.kind)));
}

const KIND_ORDER = { drop: 0, hold: 1, duplicate: 2, delay: 3 } as const;

/** Faults in step order, then kind: one spelling for one set, so a set can be a cache key. */
export function sortFaults(faults: readonly PlacedFault[]): PlacedFault[] {
  return [...faults].sort((a, b) => a.step - b.step || KIND_ORDER[a.kind] - KIND_ORDER[b.kind]);
}

/** A short text of a fault set: `step 2 duplicate ×1, step 3 hold until step 4`. */
export function describeFaults(faults: readonly PlacedFault[]): string {
  if (faults.length === 0) return 'no faults';
  return faults.map(describeFault).join(', ');
}

function describeFault(fault: PlacedFault): string {
  const step = `step ${fault.step + 1}`;
  if (fault.kind === 'duplicate') return `${step} duplicate ×${fault.copies}`;
  if (fault.kind === 'delay') return `${step} delay ${fault.ms} ms`;
  if (fault.kind === 'hold') return `${step} hold, released reversed after step ${fault.releaseAfter + 1}`;
  return `${step} drop`;
}
