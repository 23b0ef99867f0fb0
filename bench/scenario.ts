// The scenario rows (issue 45): one built-in scenario run end to end, from the built @payhook/testing/scenario,
// against an Express app with payhook on loopback; the target is under 1 s a run.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore } from '@payhook/core';
import { webhookMiddleware } from '@payhook/express';
import { runScenario } from '@payhook/testing/scenario';
import express from 'express';

export interface ScenarioBenchOptions {
  /** Runs measured per scenario, after two for warm-up. */
  runs: number;
}

/** One scenario's wall time per run: median, lowest and highest. */
export interface ScenarioRow {
  name: string;
  median: number;
  min: number;
  max: number;
  unit: 'ms';
  target: string;
  pass: boolean;
}

const SECRET = 'bench-scenario-secret';
/** The built-ins measured: the one with the most deliveries (every fault) and the one spanning the most fake time. */
const SCENARIOS = ['delivery-faults', 'subscription-three-charges'];
const TARGET_MS = 1_000;

async function startApp(): Promise<{ target: string; server: Server }> {
  const app = express();
  app.use(
    webhookMiddleware({ secret: SECRET, store: new MemoryStore(), logger: false, path: '/webhooks' }).onAny(
      () => {},
    ),
  );
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return { target: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, server };
}

export async function runScenarioRows(options: ScenarioBenchOptions): Promise<ScenarioRow[]> {
  const { target, server } = await startApp();
  const rows: ScenarioRow[] = [];
  let seed = 0;
  try {
    for (const name of SCENARIOS) {
      const times: number[] = [];
      for (let i = 0; i < options.runs + 2; i++) {
        // A fresh seed each run: the app's store would answer a repeated run's ids as duplicates.
        const started = performance.now();
        const run = await runScenario(name, { target, secret: SECRET, seed: ++seed });
        const elapsed = performance.now() - started;
        if (!run.passed)
          throw new Error(`scenario ${name} failed in the bench: ${JSON.stringify(run.failures)}`);
        if (i >= 2) times.push(elapsed);
      }
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)]!;
      rows.push({
        name: `scenario ${name}, one run (built, Express + payhook on loopback)`,
        median,
        min: times[0]!,
        max: times.at(-1)!,
        unit: 'ms',
        target: `<= ${TARGET_MS}`,
        pass: median <= TARGET_MS,
      });
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  return rows;
}
