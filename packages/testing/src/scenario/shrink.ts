import { DELAY_LADDER, type PlacedFault, sortFaults } from './draw.js';

/**
 * Whether a scenario run with these faults still fails. Exploration re-runs the scenario; tests pass a pure rule.
 *
 * @example
 * const stillFails: FailurePredicate = async (faults) => faults.some((f) => f.kind === 'duplicate');
 */
export type FailurePredicate = (faults: readonly PlacedFault[]) => Promise<boolean>;

/**
 * What shrinking found: the smallest fault set it reached that still fails, and how many times it asked.
 *
 * @example
 * const { faults, tries } = await shrinkFaults(drawn, stillFails);
 */
export interface ShrinkResult {
  readonly faults: PlacedFault[];
  /** Predicate calls made (each an entire scenario run when exploring); repeated sets are answered from memory. */
  readonly tries: number;
}

/**
 * Shrinks a failing fault set: first to the fewest faults that still fail (delta debugging over the set, ending
 * when no single fault can be removed), then each fault to its simplest form that still fails (one copy, the
 * shortest delay, a release right after the held step). The predicate must be deterministic, as a seeded scenario
 * run is; `faults` must fail.
 *
 * @example
 * const { faults } = await shrinkFaults(drawn, async (set) => (await runScenario(withFaults(set), opts)).passed === false);
 */
export async function shrinkFaults(
  faults: readonly PlacedFault[],
  stillFails: FailurePredicate,
): Promise<ShrinkResult> {
  const memory = new Map<string, boolean>();
  let tries = 0;
  const fails = async (set: readonly PlacedFault[]): Promise<boolean> => {
    const key = JSON.stringify(sortFaults(set));
    let answer = memory.get(key);
    if (answer === undefined) {
      tries++;
      answer = await stillFails(sortFaults(set));
      memory.set(key, answer);
    }
    return answer;
  };
  let current = sortFaults(faults);
  for (;;) {
    current = await fewestFaults(current, fails);
    const simpler = await simplerFaults(current, fails);
    if (JSON.stringify(simpler) === JSON.stringify(current)) break;
    current = simpler;
  }
  return { faults: current, tries };
}

type Fails = (set: readonly PlacedFault[]) => Promise<boolean>;

/** ddmin (Zeller): remove chunks, halving their size, until no single fault can go. */
async function fewestFaults(faults: PlacedFault[], fails: Fails): Promise<PlacedFault[]> {
  let current = faults;
  let chunks = 2;
  while (current.length > 0) {
    if (current.length === 1) {
      return (await fails([])) ? [] : current;
    }
    const size = Math.ceil(current.length / chunks);
    let reduced = false;
    for (let start = 0; start < current.length; start += size) {
      const without = [...current.slice(0, start), ...current.slice(start + size)];
      if (await fails(without)) {
        current = without;
        chunks = Math.max(chunks - 1, 2);
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      if (size === 1) return current;
      chunks = Math.min(chunks * 2, current.length);
    }
  }
  return current;
}

/** Each fault replaced by its simplest form that still fails, one fault at a time. */
async function simplerFaults(faults: PlacedFault[], fails: Fails): Promise<PlacedFault[]> {
  const current = [...faults];
  for (let i = 0; i < current.length; i++) {
    for (const candidate of simplerForms(current[i]!)) {
      const trial = current.map((fault, j) => (j === i ? candidate : fault));
      if (await fails(trial)) {
        current[i] = candidate;
        break;
      }
    }
  }
  return sortFaults(current);
}

/** The forms simpler than `fault`, simplest first. */
function simplerForms(fault: PlacedFault): PlacedFault[] {
  switch (fault.kind) {
    case 'duplicate':
      return Array.from({ length: fault.copies - 1 }, (_, i) => ({ ...fault, copies: i + 1 }));
    case 'delay':
      return DELAY_LADDER.filter((ms) => ms < fault.ms).map((ms) => ({ ...fault, ms }));
    case 'hold':
      return Array.from({ length: fault.releaseAfter - fault.step }, (_, i) => ({
        ...fault,
        releaseAfter: fault.step + i,
      }));
    case 'drop':
      return [];
  }
}
