import { afterEach, describe, expect, it } from 'vitest';
import { exploreScenario, failureKey } from './explore.js';
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

describe('failureKey', () => {
  it('is the same for one expectation failing in two runs, whatever each observed', () => {
    const message = (seed: number, id: string, webhook: number) =>
      `webhook #${webhook} (purchase success, order life-order-s${seed}, payment ${id}) was never acknowledged`;
    expect(
      failureKey({
        kind: 'webhook',
        message: message(1507053014, '3cad8ae3-4806-41bd-9f6e-686589334c6b', 1),
      }),
    ).toBe(
      failureKey({
        kind: 'webhook',
        step: 2,
        message: message(1805003797, '9d2ef172-b97b-43af-bbb6-10ba41224499', 4),
      }),
    );
    expect(failureKey({ kind: 'http', message: 'GET /orders/{order}: refunded is 80, expected 40' })).toBe(
      failureKey({ kind: 'http', message: 'GET /orders/{order}: refunded is 120, expected 40' }),
    );
    expect(
      failureKey({ kind: 'http', message: 'GET /orders/{order}: status is "pending", expected "success"' }),
    ).toBe(
      failureKey({ kind: 'http', message: 'GET /orders/{order}: status is "failure", expected "success"' }),
    );
  });

  it('tells failures of other expectations or kinds apart', () => {
    expect(failureKey({ kind: 'http', message: 'GET /orders/{order}: paid is 0, expected 100' })).not.toBe(
      failureKey({ kind: 'http', message: 'GET /orders/{order}: refunded is 80, expected 40' }),
    );
    expect(failureKey({ kind: 'step', message: 'x' })).not.toBe(failureKey({ kind: 'http', message: 'x' }));
  });
});
