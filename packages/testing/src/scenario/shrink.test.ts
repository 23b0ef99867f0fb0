import { describe, expect, it } from 'vitest';
import { drawFaults, type PlacedFault } from './draw.js';
import { type FailurePredicate, shrinkFaults } from './shrink.js';

const MANY: PlacedFault[] = [
  { step: 0, kind: 'duplicate', copies: 3 },
  { step: 0, kind: 'delay', ms: 3_600_000 },
  { step: 1, kind: 'hold', releaseAfter: 4 },
  { step: 2, kind: 'duplicate', copies: 2 },
  { step: 3, kind: 'delay', ms: 60_000 },
  { step: 4, kind: 'drop' },
];

/** Fails while some fault matches each of `needs`. */
function needs(...rules: Array<(fault: PlacedFault) => boolean>): FailurePredicate {
  return async (faults) => rules.every((rule) => faults.some(rule));
}

describe('shrinkFaults', () => {
  it('shrinks to the one fault a failure needs, in its simplest form', async () => {
    const { faults } = await shrinkFaults(
      MANY,
      needs((f) => f.kind === 'duplicate' && f.step === 2),
    );
    expect(faults).toEqual([{ step: 2, kind: 'duplicate', copies: 1 }]);
  });

  it('shrinks to exactly the two faults a failure needs together', async () => {
    const { faults } = await shrinkFaults(
      MANY,
      needs(
        (f) => f.kind === 'duplicate' && f.step === 0,
        (f) => f.kind === 'hold' && f.releaseAfter >= 2,
      ),
    );
    expect(faults).toEqual([
      { step: 0, kind: 'duplicate', copies: 1 },
      { step: 1, kind: 'hold', releaseAfter: 2 },
    ]);
  });

  it('keeps what the failure needs of a fault: two copies, a delay of a minute', async () => {
    const { faults } = await shrinkFaults(
      MANY,
      needs(
        (f) => f.kind === 'duplicate' && f.step === 0 && f.copies >= 2,
        (f) => f.kind === 'delay' && f.step === 0 && f.ms >= 60_000,
      ),
    );
    expect(faults).toEqual([
      { step: 0, kind: 'duplicate', copies: 2 },
      { step: 0, kind: 'delay', ms: 60_000 },
    ]);
  });

  it('shrinks to no fault when the run fails without any', async () => {
    expect((await shrinkFaults(MANY, async () => true)).faults).toEqual([]);
  });

  it('asks once per distinct set', async () => {
    const asked: string[] = [];
    const { tries } = await shrinkFaults(MANY, async (faults) => {
      asked.push(JSON.stringify(faults));
      return faults.some((f) => f.kind === 'drop');
    });
    expect(new Set(asked).size).toBe(asked.length);
    expect(tries).toBe(asked.length);
  });

  it('ends 1-minimal on drawn sets: no single fault of the result can go', async () => {
    for (let run = 0; run < 40; run++) {
      const drawn = drawFaults({ steps: [0, 1, 2, 3, 4, 5], length: 6 }, 9, run);
      if (drawn.length < 2) continue;
      const rule: FailurePredicate = async (set) =>
        set.filter((f) => f.kind !== 'delay').length >= 2 || set.some((f) => f.kind === 'drop');
      if (!(await rule(drawn))) continue;
      const { faults } = await shrinkFaults(drawn, rule);
      expect(await rule(faults)).toBe(true);
      for (let i = 0; i < faults.length; i++) {
        expect(await rule(faults.filter((_, j) => j !== i))).toBe(false);
      }
    }
  });
});
