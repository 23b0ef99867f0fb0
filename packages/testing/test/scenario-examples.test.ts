import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExampleName, type RunningExample, startExample } from '../../../examples/shared/src/child.ts';
import { REDIS_URL, reachRedis } from '../../core/test/servers.ts';
import { builtInScenarios } from '../src/scenario/builtins.js';
import { runScenario } from '../src/scenario/runner.js';
import { formatTimeline } from '../src/scenario/timeline.js';
import type { ScenarioRun } from '../src/scenario/types.js';

// Must-show of issue 45: every built-in scenario green against each example app, on what those apps can answer
// (the webhooks and their answers: the examples keep no ledger in the test's process and expose no state route),
// and the application's handler ran once per webhook answered handled (queued, for examples/queue).
const SECRET = 'scenario-examples-secret';
const scenarios = builtInScenarios();

/** How many deliveries each run had answered `handled` (or `queued`): each is one line the app printed. */
function answeredForHandling(runs: readonly ScenarioRun[]): number {
  return runs
    .flatMap((run) => run.timeline)
    .filter(
      (entry) => entry.type === 'delivery' && (entry.outcome === 'handled' || entry.outcome === 'queued'),
    ).length;
}

async function runAll(url: string): Promise<ScenarioRun[]> {
  const runs: ScenarioRun[] = [];
  for (const scenario of scenarios) {
    runs.push(await runScenario(scenario, { target: `${url}/webhooks`, secret: SECRET, seed: 45 }));
  }
  return runs;
}

function expectGreen(runs: readonly ScenarioRun[]): void {
  for (const run of runs) expect(run.failures, formatTimeline(run)).toEqual([]);
  expect(runs.map((run) => run.scenario.name)).toEqual(scenarios.map((s) => s.name));
}

describe.each(['express', 'koa', 'fastify', 'nestjs'] satisfies ExampleName[])('examples/%s', (name) => {
  let example: RunningExample;

  beforeAll(async () => {
    example = await startExample(name, SECRET);
  });
  afterAll(async () => {
    await example?.stop();
  });

  it('passes every built-in scenario, its handler run once per webhook answered handled', async () => {
    const runs = await runAll(example.url);
    expectGreen(runs);
    const handled = answeredForHandling(runs);
    expect(handled).toBeGreaterThanOrEqual(scenarios.length);
    await example.waitForLines(handled);
    expect(example.lines).toHaveLength(handled);
  });
});

const redis = await reachRedis();

describe('examples/queue (web process and worker, BullMQ on Redis)', () => {
  const running: RunningExample[] = [];

  afterAll(async () => {
    await Promise.all(running.map((example) => example.stop()));
  });

  it.skipIf(!redis)(
    'passes every built-in scenario, the worker running each queued webhook once',
    async () => {
      const run = randomBytes(4).toString('hex');
      const env = {
        REDIS_URL,
        PAYHOOK_QUEUE: `payhook-scenario-${run}`,
        PAYHOOK_PREFIX: `payhook-scenario-${run}:`,
      };
      const web = await startExample('queue', SECRET, 30_000, { env });
      running.push(web);
      const worker = await startExample('queue', SECRET, 30_000, { script: 'src/worker.ts', env });
      running.push(worker);
      const runs = await runAll(web.url);
      expectGreen(runs);
      const queued = answeredForHandling(runs);
      await worker.waitForLines(queued);
      expect(worker.lines).toHaveLength(queued);
    },
  );
});
