// The exploration row: `exploreScenario` over a built-in scenario, 200 runs with drawn faults against a correct
// app on loopback (core's handler with MemoryStore and a payment ledger, in this process, as a vitest test has it).
// Wall time: a run is a chain of HTTP round trips on loopback, not CPU in one process.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { createPaymentLedger } from '@payhook/payments';
import { exploreScenario } from '@payhook/testing/scenario';

export interface ExploreBenchOptions {
  rounds: number;
  runs: number;
  scenario: string;
}

/** The wall time of one exploration, median over the rounds, with the lowest and highest round. */
export interface ExploreRow {
  name: string;
  median: number;
  min: number;
  max: number;
  unit: 's';
  target: string;
  pass: boolean;
}

const SECRET = 'bench-explore-secret';
const TARGET_SECONDS = 30;

async function exploreOnce(options: ExploreBenchOptions, seed: number): Promise<number> {
  const ledger = createPaymentLedger();
  const webhook = createWebhookHandler<IncomingMessage>({
    secret: SECRET,
    ledger,
    logger: false,
    handle: () => {},
  });
  const server = createServer(createNodeListener(webhook));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  try {
    const started = performance.now();
    const result = await exploreScenario(options.scenario, {
      target,
      secret: SECRET,
      ledger,
      runs: options.runs,
      seed,
    });
    const seconds = (performance.now() - started) / 1000;
    // A failure would stop early and shrink: the row measures 200 passing runs, so a failing one is a bug to fix.
    if (result.failure) throw new Error(`exploration of a correct app failed: ${result.failure.summary}`);
    return seconds;
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

export async function runExplore(
  options: ExploreBenchOptions,
  log: (line: string) => void,
): Promise<ExploreRow[]> {
  const rounds: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    rounds.push(await exploreOnce(options, round + 1));
    log(`explore: round ${round + 1}: ${options.runs} runs in ${rounds.at(-1)!.toFixed(2)} s`);
  }
  const sorted = [...rounds].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return [
    {
      name: `exploreScenario: ${options.runs} runs of ${options.scenario} with drawn faults, local app`,
      median,
      min: sorted[0]!,
      max: sorted.at(-1)!,
      unit: 's',
      target: `<= ${TARGET_SECONDS}`,
      pass: median <= TARGET_SECONDS,
    },
  ];
}
