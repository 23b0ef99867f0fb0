// `pnpm bench [--quick] [--only micro,http,memory,stores,queue,relay,scenario,explore]`: payhook against the libraries a merchant would pick
// instead and against the hand-written floor. Prints one table and writes bench/results.json.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from './build.js';
import type { ExploreRow } from './explore.js';
import type { HttpRowResult } from './http.js';
import type { MemoryRow } from './memory.js';
import type { MicroRow } from './micro.js';
import type { QueueRow } from './queue.js';
import type { RelayRow } from './relay.js';
import type { ScenarioRow } from './scenario.js';
import type { SkippedStore, StoreRow } from './stores.js';
import { formatResults, type Results } from './table.js';
import { computeRatios } from './targets.js';

const started = performance.now();

const SECTIONS = ['micro', 'http', 'memory', 'stores', 'queue', 'relay', 'scenario', 'explore'] as const;
type Section = (typeof SECTIONS)[number];

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const onlyIndex = args.indexOf('--only');
const only = new Set<Section>(
  onlyIndex === -1 ? SECTIONS : ((args[onlyIndex + 1] ?? '').split(',') as Section[]),
);
for (const section of only) {
  if (!SECTIONS.includes(section)) throw new Error(`--only takes ${SECTIONS.join(',')}, not ${section}`);
}

const log = (line: string) =>
  console.error(`${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);
// The rows import the packages' builds, so they are loaded only once the builds are fresh.
ensureBuilt(log);

// Children (servers, memory) load TypeScript through tsx with this tsconfig: no paths, so every @payhook package
// resolves through node_modules to its built dist, as a merchant's install does.
process.env.TSX_TSCONFIG_PATH = fileURLToPath(new URL('./tsconfig.json', import.meta.url));
const corePath = fileURLToPath(import.meta.resolve('@payhook/core'));
if (!corePath.includes('/dist/')) {
  throw new Error(`@payhook/core resolved to ${corePath}, not its build: run through \`pnpm bench\``);
}

const settings = quick
  ? {
      micro: { rounds: 3, timeMs: 80, pool: 4_000 },
      http: { rounds: 1, seconds: 1, warmupSeconds: 0.25, connections: 50 },
      memory: [1_000_000],
      stores: { rounds: 1, claimMs: 300, sequential: 100, inFlight: [1, 50], limitSeconds: 1 },
      queue: {
        rounds: 1,
        requests: 100,
        inFlight: [1, 20],
        workMs: 20,
        jobs: 1_000,
        workerPhases: 1,
        concurrency: 16,
        burst: 120,
        warmup: 10,
        warmPairs: 2,
      },
      relay: { latencyDeliveries: 200, backlog: 2_000, rss: [1_000, 20_000] as [number, number] },
      scenario: { runs: 5 },
      explore: { rounds: 1, runs: 200, scenario: 'purchase-two-refunds' },
    }
  : {
      micro: { rounds: 5, timeMs: 300, pool: 16_000 },
      http: { rounds: 5, seconds: 2, warmupSeconds: 1, connections: 50 },
      memory: [100_000, 1_000_000],
      stores: { rounds: 3, claimMs: 1_000, sequential: 300, inFlight: [1, 20, 50, 200], limitSeconds: 1 },
      queue: {
        rounds: 3,
        requests: 400,
        inFlight: [1, 20],
        workMs: 20,
        jobs: 5_000,
        workerPhases: 3,
        concurrency: 16,
        burst: 120,
        warmup: 10,
        warmPairs: 4,
      },
      relay: { latencyDeliveries: 1_000, backlog: 10_000, rss: [1_000, 100_000] as [number, number] },
      scenario: { runs: 20 },
      explore: { rounds: 3, runs: 200, scenario: 'purchase-two-refunds' },
    };

const loadAtStart = loadavg();
let micro: MicroRow[] = [];
let http: HttpRowResult[] = [];
let memory: MemoryRow[] = [];
let stores: StoreRow[] = [];
let queue: QueueRow[] = [];
let relay: RelayRow[] = [];
let scenario: ScenarioRow[] = [];
let explore: ExploreRow[] = [];
const skipped: SkippedStore[] = [];

if (only.has('micro')) {
  log(`micro: ${settings.micro.rounds} rounds of ${settings.micro.timeMs} ms CPU per row`);
  micro = await (await import('./micro.js')).runMicro(settings.micro);
}
if (only.has('http')) {
  log(
    `http: ${settings.http.rounds} rounds of ${settings.http.seconds} s per row, -c ${settings.http.connections}`,
  );
  http = await (await import('./http.js')).runHttp(settings.http, log);
}
if (only.has('memory')) {
  log(`memory: MemoryStore at ${settings.memory.join(', ')} entries`);
  memory = await (await import('./memory.js')).runMemory(settings.memory);
}
if (only.has('stores')) {
  log('stores: Redis and PostgreSQL on loopback');
  const result = await (await import('./stores.js')).runStores(settings.stores, log);
  stores = result.rows;
  skipped.push(...result.skipped);
}

if (only.has('queue')) {
  log(`queue: BullMQ and pg-boss on loopback, handler work ${settings.queue.workMs} ms`);
  const result = await (await import('./queue.js')).runQueue(settings.queue, log);
  queue = result.rows;
  skipped.push(...result.skipped);
}

if (only.has('relay')) {
  log('relay: the bin on a file journal and payhook relay connect, on loopback');
  relay = await (await import('./relay.js')).runRelay(settings.relay, log);
}

if (only.has('scenario')) {
  log(`scenario: built-in scenarios end to end, ${settings.scenario.runs} runs each`);
  scenario = await (await import('./scenario.js')).runScenarioRows(settings.scenario);
}

if (only.has('explore')) {
  log(
    `explore: ${settings.explore.rounds} rounds of ${settings.explore.runs} runs of ${settings.explore.scenario}`,
  );
  explore = await (await import('./explore.js')).runExplore(settings.explore, log);
}

const results: Results = {
  date: new Date().toISOString(),
  mode: quick ? 'quick' : 'full',
  node: process.versions.node,
  cpus: { count: cpus().length, model: cpus()[0]?.model.trim() ?? 'unknown' },
  loadAverage: { start: loadAtStart, end: loadavg() },
  durationSeconds: (performance.now() - started) / 1000,
  settings,
  micro,
  http,
  memory,
  stores,
  queue,
  relay,
  scenario,
  explore,
  skipped,
  ratios: computeRatios(micro, http, memory, stores, queue),
};
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
log('done');
console.log(formatResults(results));
