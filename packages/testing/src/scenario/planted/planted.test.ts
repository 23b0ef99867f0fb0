import { afterEach, describe, expect, it } from 'vitest';
import type { FaultKind } from '../draw.js';
import { type ExploreResult, exploreScenario } from '../explore.js';
import { parseScenario } from '../load.js';
import { runScenario } from '../runner.js';
import type { Scenario } from '../types.js';
import { countsCharges } from './counts-charges.js';
import { lastWebhookWins } from './last-webhook-wins.js';
import { parkedRefunds } from './parked-refunds.js';
import { COUNTED_CHARGES, PARKED_REFUND, THREE_DS_STATUS } from './scenarios.js';
import { PLANTED_SECRET, type PlantedApp, type PlantedInstance, startPlantedApp } from './serve.js';

const RUNS = 200;
const SEED = 1;

const apps: PlantedApp[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function explore(
  build: () => PlantedInstance,
  scenario: Scenario,
  faults?: readonly FaultKind[],
): Promise<{ app: PlantedApp; result: ExploreResult }> {
  const app = await startPlantedApp(build);
  apps.push(app);
  const result = await exploreScenario(scenario, {
    target: app.url,
    secret: PLANTED_SECRET,
    runs: RUNS,
    seed: SEED,
    ...(faults === undefined ? {} : { faults }),
  });
  return { app, result };
}

/** The printed file, parsed and run again with a seed exploration never used: it fails the same way. */
async function replay(app: PlantedApp, result: ExploreResult) {
  const again = await runScenario(parseScenario(result.failure!.file), {
    target: app.url,
    secret: PLANTED_SECRET,
    seed: 7,
  });
  expect(again.passed).toBe(false);
  expect(again.failures.map((f) => f.kind)).toEqual(result.failure!.run.failures.map((f) => f.kind));
  return again;
}

describe('(a) charges counted without idempotency', () => {
  it('is found through a duplicate and shrunk to that one duplicate', async () => {
    const { app, result } = await explore(() => countsCharges({ fixed: false }), COUNTED_CHARGES);
    const failure = result.failure!;
    expect(failure.found.run).toBeLessThanOrEqual(RUNS);
    expect(failure.found.faults).toEqual([
      { step: 0, kind: 'duplicate', copies: 1 },
      { step: 1, kind: 'hold', releaseAfter: 3 },
    ]);
    expect(failure.faults).toEqual([{ step: 0, kind: 'duplicate', copies: 1 }]);
    expect(failure.run.failures).toEqual([
      { kind: 'http', message: 'GET /orders/{order}: charges is 2, expected 1' },
      { kind: 'http', message: 'GET /orders/{order}: charged is 200, expected 100' },
    ]);
    await replay(app, result);
  });

  it('passes all 200 runs of the same seed once the duplicate store is on', async () => {
    const { result } = await explore(() => countsCharges({ fixed: true }), COUNTED_CHARGES);
    expect(result).toEqual({ runs: RUNS, seed: SEED });
  });
});

describe('(b) an order status written from whichever webhook came last', () => {
  it('is found through pending delivered after success, shrunk to the one fault on the pending step', async () => {
    const { app, result } = await explore(() => lastWebhookWins({ fixed: false }), THREE_DS_STATUS);
    const failure = result.failure!;
    expect(failure.found.run).toBeLessThanOrEqual(RUNS);
    expect(failure.faults).toEqual([{ step: 0, kind: 'delay', ms: 1_000 }]);
    expect(failure.run.failures).toEqual([
      { kind: 'http', message: 'GET /orders/{order}: status is "pending", expected "success"' },
    ]);
    const acknowledged = failure.run.timeline.flatMap((entry) =>
      entry.type === 'delivery' && entry.status === 200 && entry.order.includes('-order-')
        ? [entry.event]
        : [],
    );
    expect(acknowledged).toEqual(['purchase success', 'purchase pending']);
    await replay(app, result);
  });

  it('is found through a hold released in reverse when only reorders are drawn', async () => {
    const { app, result } = await explore(() => lastWebhookWins({ fixed: false }), THREE_DS_STATUS, ['hold']);
    const failure = result.failure!;
    expect(failure.found.run).toBeLessThanOrEqual(RUNS);
    expect(failure.faults).toEqual([{ step: 0, kind: 'hold', releaseAfter: 2 }]);
    expect(failure.summary).toBe('step 1 hold, released reversed after step 3');
    expect(failure.scenario.steps).toEqual([
      { create: { as: 'order', amount: 100, card: 'threeDs' }, faults: { hold: true } },
      { create: { as: 'other', amount: 50 } },
      { threeDs: { payment: 'order' } },
      { release: { reverse: true } },
      { refund: { payment: 'other', amount: 10 } },
    ]);
    await replay(app, result);
  });

  it('passes all 200 runs of the same seeds once a settled status is never replaced by pending', async () => {
    for (const faults of [undefined, ['hold'] as const]) {
      const { result } = await explore(() => lastWebhookWins({ fixed: true }), THREE_DS_STATUS, faults);
      expect(result).toEqual({ runs: RUNS, seed: SEED });
    }
  });
});

describe('(c) refunds parked before their purchase, counted per copy', () => {
  it('is found only when a late purchase and a duplicate refund meet, and shrunk to exactly those two', async () => {
    const { app, result } = await explore(() => parkedRefunds({ fixed: false }), PARKED_REFUND);
    const failure = result.failure!;
    expect(failure.found.run).toBeLessThanOrEqual(RUNS);
    expect(failure.found.faults.length).toBeGreaterThan(2);
    expect(failure.faults).toEqual([
      { step: 1, kind: 'delay', ms: 1_000 },
      { step: 3, kind: 'duplicate', copies: 1 },
    ]);
    expect(failure.run.failures).toEqual([
      { kind: 'http', message: 'GET /orders/{other}: refunded is 120, expected 60' },
    ]);
    await replay(app, result);
    for (const alone of failure.faults) {
      const run = await runScenario(withOnly(failure.scenario, alone.step), {
        target: app.url,
        secret: PLANTED_SECRET,
        seed: 8 + alone.step,
      });
      expect(run.failures).toEqual([]);
    }
  });

  it('passes all 200 runs of the same seed once parked refunds go through the operation_id check', async () => {
    const { result } = await explore(() => parkedRefunds({ fixed: true }), PARKED_REFUND);
    expect(result).toEqual({ runs: RUNS, seed: SEED });
  });
});

/** The scenario with the faults of step `keep` only (a hold's release step stays: it releases nothing else). */
function withOnly(scenario: Scenario, keep: number): Scenario {
  return {
    ...scenario,
    steps: scenario.steps.map((step, index) => {
      if (index === keep || step.faults === undefined) return step;
      const { faults: _dropped, ...rest } = step;
      return rest as Scenario['steps'][number];
    }),
  };
}
