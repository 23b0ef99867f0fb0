import { describe, expect, it } from 'vitest';
import { createDraws, DELAY_LADDER, describeFaults, drawFaults, type FaultSpace } from './draw.js';

const SPACE: FaultSpace = { steps: [0, 1, 3, 4], length: 6 };

describe('drawFaults', () => {
  it('draws the same faults for the same seed and run', () => {
    for (let run = 0; run < 50; run++) expect(drawFaults(SPACE, 42, run)).toEqual(drawFaults(SPACE, 42, run));
  });

  it('draws other faults for another seed or another run', () => {
    const runs = (seed: number) =>
      JSON.stringify(Array.from({ length: 20 }, (_, run) => drawFaults(SPACE, seed, run)));
    expect(runs(1)).not.toBe(runs(2));
    expect(
      new Set(Array.from({ length: 20 }, (_, run) => JSON.stringify(drawFaults(SPACE, 7, run)))).size,
    ).toBeGreaterThan(10);
  });

  it('places faults only on webhook-causing steps and releases a hold after a later step', () => {
    const kinds = new Set<string>();
    for (let run = 0; run < 500; run++) {
      for (const fault of drawFaults(SPACE, 3, run)) {
        kinds.add(fault.kind);
        expect(SPACE.steps).toContain(fault.step);
        if (fault.kind === 'duplicate') expect([1, 2, 3]).toContain(fault.copies);
        if (fault.kind === 'delay') expect(DELAY_LADDER).toContain(fault.ms);
        if (fault.kind === 'hold') {
          expect(fault.releaseAfter).toBeGreaterThan(fault.step);
          expect(fault.releaseAfter).toBeLessThan(SPACE.length);
        }
      }
    }
    expect([...kinds].sort()).toEqual(['delay', 'drop', 'duplicate', 'hold']);
  });

  it('never drops and duplicates or delays one step, and holds at most one step a run', () => {
    for (let run = 0; run < 500; run++) {
      const faults = drawFaults(SPACE, 11, run);
      expect(faults.filter((f) => f.kind === 'hold').length).toBeLessThanOrEqual(1);
      for (const drop of faults.filter((f) => f.kind === 'drop')) {
        expect(faults.filter((f) => f.step === drop.step && f.kind !== 'hold')).toEqual([drop]);
      }
    }
  });

  it('keeps only the kinds asked for, from the same draws', () => {
    for (let run = 0; run < 100; run++) {
      const all = drawFaults(SPACE, 13, run);
      expect(drawFaults(SPACE, 13, run, ['hold', 'duplicate'])).toEqual(
        all.filter((f) => f.kind === 'hold' || f.kind === 'duplicate'),
      );
    }
  });

  it('draws nothing for a scenario without webhook-causing steps', () => {
    expect(drawFaults({ steps: [], length: 3 }, 1, 0)).toEqual([]);
  });

  it('releases a hold on the last step right after it', () => {
    const holds = Array.from({ length: 200 }, (_, run) => drawFaults({ steps: [2], length: 3 }, 5, run))
      .flat()
      .filter((fault) => fault.kind === 'hold');
    expect(holds.length).toBeGreaterThan(0);
    for (const hold of holds) expect(hold).toEqual({ step: 2, kind: 'hold', releaseAfter: 2 });
  });
});

describe('createDraws', () => {
  it('gives numbers in [0, 1), the same sequence for the same seed and run', () => {
    const a = createDraws(5, 2);
    const b = createDraws(5, 2);
    for (let i = 0; i < 100; i++) {
      const x = a();
      expect(x).toBe(b());
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });
});

describe('describeFaults', () => {
  it('names each fault with its 1-based step', () => {
    expect(
      describeFaults([
        { step: 0, kind: 'drop' },
        { step: 1, kind: 'hold', releaseAfter: 2 },
        { step: 1, kind: 'duplicate', copies: 2 },
        { step: 2, kind: 'delay', ms: 1000 },
      ]),
    ).toBe(
      'step 1 drop, step 2 hold, released reversed after step 3, step 2 duplicate ×2, step 3 delay 1000 ms',
    );
    expect(describeFaults([])).toBe('no faults');
  });
});
