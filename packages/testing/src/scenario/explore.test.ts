import { afterEach, describe, expect, it } from 'vitest';
import { exploreScenario } from './explore.js';
import { countsCharges } from './planted/counts-charges.js';
import { parkedRefunds } from './planted/parked-refunds.js';
import { COUNTED_CHARGES, PARKED_REFUND } from './planted/scenarios.js';
import { PLANTED_SECRET, type PlantedApp, startPlantedApp } from './planted/serve.js';
import { formatTimeline } from './timeline.js';

const apps: PlantedApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('exploreScenario', () => {
  it('gives the same failure, file and timeline for the same seed, byte for byte', async () => {
    const app = await startPlantedApp(() => parkedRefunds({ fixed: false }));
    apps.push(app);
    const explore = () =>
      exploreScenario(PARKED_REFUND, {
        target: app.url,
        secret: PLANTED_SECRET,
        runs: 200,
        seed: 42,
        reset: () => app.reset(),
      });
    const first = (await explore()).failure!;
    const second = (await explore()).failure!;
    expect(second.file).toBe(first.file);
    expect(formatTimeline(second.run)).toBe(formatTimeline(first.run));
    expect(second.found).toEqual(first.found);
    expect(second.shrinkRuns).toBe(first.shrinkRuns);
  });

  it('gives every scenario run new order ids: an app keeping its duplicate store passes without a reset', async () => {
    const app = await startPlantedApp(() => countsCharges({ fixed: true }));
    apps.push(app);
    const options = { target: app.url, secret: PLANTED_SECRET, runs: 50, seed: 3 };
    expect(await exploreScenario(COUNTED_CHARGES, options)).toEqual({ runs: 50, seed: 3 });
    // The same seed again reuses those ids: the store answers them duplicate and the runner says why.
    const again = (await exploreScenario(COUNTED_CHARGES, options)).failure!;
    expect(again.run.failures[0]!.message).toMatch(/was sent for the first time and answered "duplicate"/);
  });

  it('calls reset before every scenario run', async () => {
    let resets = 0;
    const app = await startPlantedApp(() => countsCharges({ fixed: true }));
    apps.push(app);
    const options = {
      target: app.url,
      secret: PLANTED_SECRET,
      runs: 20,
      seed: 5,
      reset: () => void resets++,
    };
    expect(await exploreScenario(COUNTED_CHARGES, options)).toEqual({ runs: 20, seed: 5 });
    expect(resets).toBe(20);
  });

  it('refuses a number of runs that is not a whole number from 1, and an unknown fault', async () => {
    await expect(exploreScenario(PARKED_REFUND, { target: 'http://127.0.0.1:9/', runs: 0 })).rejects.toThrow(
      '[@payhook/testing] runs must be a whole number ≥ 1, not 0.',
    );
    await expect(
      exploreScenario(PARKED_REFUND, { target: 'http://127.0.0.1:9/', faults: ['reorder' as 'hold'] }),
    ).rejects.toThrow('[@payhook/testing] faults are drop, hold, duplicate, delay, not "reorder".');
  });
});
