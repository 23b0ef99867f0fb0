import type { ExploreRow } from './explore.js';
import type { HttpRowResult } from './http.js';
import type { MemoryRow } from './memory.js';
import type { MicroRow } from './micro.js';
import type { QueueRow } from './queue.js';
import type { RelayRow } from './relay.js';
import type { ScenarioRow } from './scenario.js';
import type { SkippedStore, StoreRow } from './stores.js';
import type { Ratio } from './targets.js';

/** Everything one run measured, as written to bench/results.json. */
export interface Results {
  date: string;
  mode: 'full' | 'quick';
  node: string;
  cpus: { count: number; model: string };
  loadAverage: { start: number[]; end: number[] };
  durationSeconds: number;
  settings: Record<string, unknown>;
  micro: MicroRow[];
  http: HttpRowResult[];
  memory: MemoryRow[];
  stores: StoreRow[];
  /** Absent from runs before the queue rows existed. */
  queue?: QueueRow[];
  /** Absent from runs before the relay rows existed. */
  relay?: RelayRow[];
  /** Absent from runs before the scenario rows existed. */
  scenario?: ScenarioRow[];
  /** Absent from runs before the exploration row existed. */
  explore?: ExploreRow[];
  skipped: (SkippedStore | { name: string; reason: string })[];
  ratios: Ratio[];
}

function fixed(value: number, digits: number): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Rows with a spread and a target each (the scenario and exploration rows), `digits` after the point. */
function targetedRows(title: string, rows: readonly (ScenarioRow | ExploreRow)[], digits: number): string {
  return markdown(
    [title, 'median', 'min – max', 'unit', 'target', ''],
    rows.map((row) => [
      row.name,
      fixed(row.median, digits),
      `${fixed(row.min, digits)} – ${fixed(row.max, digits)}`,
      row.unit,
      row.target,
      row.pass ? 'pass' : 'MISS',
    ]),
  );
}

function markdown(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The run as Markdown tables: printed on stdout and pasted into bench/README.md. */
export function formatResults(results: Results): string {
  const out: string[] = [];
  const load = results.loadAverage.start.map((v) => v.toFixed(2)).join(' ');
  out.push(
    `${results.date}, ${results.mode} run, Node ${results.node}, ${results.cpus.count} × ${results.cpus.model}, load average at start ${load}, ${Math.round(results.durationSeconds)} s`,
  );
  const minimum = results.micro.find((row) => row.name === 'hand-written minimum');
  if (results.micro.length > 0) {
    out.push(
      '',
      markdown(
        [
          'micro row (~1.2 KB notification)',
          'µs CPU per call, median',
          'min – max',
          '× hand-written minimum',
        ],
        results.micro.map((row) => [
          row.name,
          fixed(row.median, 2),
          `${fixed(row.min, 2)} – ${fixed(row.max, 2)}`,
          minimum ? fixed(row.median / minimum.median, 2) : '',
        ]),
      ),
    );
  }
  if (results.http.length > 0) {
    out.push(
      '',
      markdown(
        [
          'HTTP row (autocannon -c 50, loopback)',
          'req per server CPU-s, median',
          'min – max',
          'req/s, median (context)',
          'p50 latency ms',
          'handled / answered',
          'load generator CPU',
        ],
        results.http.map((row) => [
          row.name,
          fixed(row.median, 0),
          `${fixed(row.min, 0)} – ${fixed(row.max, 0)}`,
          fixed(row.rps.median, 0),
          fixed(row.latencyP50, 0),
          `${row.handled} / ${row.answered}`,
          `${Math.round(row.generatorCpu * 100)}%`,
        ]),
      ),
    );
  }
  if (results.memory.length > 0) {
    out.push(
      '',
      markdown(
        ['memory row', 'heap B/entry at the bound', 'B/entry after 2x the bound', 'growth over a 3rd bound'],
        results.memory.map((row) => [
          row.name,
          fixed(row.bytesAtBound, 1),
          fixed(row.bytesAfterTwice, 1),
          `${fixed(row.growthAfterBound, 3)}x`,
        ]),
      ),
    );
  }
  const pairs = results.stores.filter((row) => row.unit === 'pairs/s');
  if (pairs.length > 0) {
    const ms = (value: number) => fixed(value, 2);
    out.push(
      '',
      markdown(
        [
          'store (loopback), in flight',
          'pairs/s, median (min – max)',
          'p50 / p99 ms',
          "database's own limit, same statements",
          'p50 / p99 ms',
          'ratio (min – max)',
        ],
        pairs.map((row) => [
          `${row.store}, ${row.inFlight}`,
          `${fixed(row.median, 0)} (${fixed(row.min, 0)} – ${fixed(row.max, 0)})`,
          row.latency ? `${ms(row.latency.p50)} / ${ms(row.latency.p99)}` : '',
          row.limit
            ? `${fixed(row.limit.median, 0)} (${fixed(row.limit.min, 0)} – ${fixed(row.limit.max, 0)}), ${row.limit.tool}`
            : 'skipped',
          row.limit ? `${ms(row.limit.latency.p50)} / ${ms(row.limit.latency.p99)}` : '',
          row.ratio
            ? `${fixed(row.ratio.median, 2)} (${fixed(row.ratio.min, 2)} – ${fixed(row.ratio.max, 2)})`
            : '',
        ]),
      ),
    );
  }
  const added = results.stores.filter((row) => row.unit === 'µs');
  if (added.length > 0) {
    out.push(
      '',
      markdown(
        ['store row (loopback)', 'median', 'min – max', 'unit'],
        added.map((row) => [
          row.name,
          fixed(row.median, 0),
          `${fixed(row.min, 0)} – ${fixed(row.max, 0)}`,
          row.unit,
        ]),
      ),
    );
  }
  if (results.queue && results.queue.length > 0) {
    out.push(
      '',
      markdown(
        ['queue row (loopback)', 'median', 'min – max', 'unit', 'p99 ms, median'],
        results.queue.map((row) => [
          row.name,
          fixed(row.median, row.unit === 'ms' ? 2 : 0),
          `${fixed(row.min, row.unit === 'ms' ? 2 : 0)} – ${fixed(row.max, row.unit === 'ms' ? 2 : 0)}`,
          row.unit === 'ms' ? 'ms p50' : row.unit,
          row.p99 ? fixed(row.p99.median, 2) : '',
        ]),
      ),
    );
  }
  if (results.relay && results.relay.length > 0) {
    out.push(
      '',
      markdown(
        ['relay row (loopback, built bin and CLI)', 'value', 'unit', 'target', ''],
        results.relay.map((row) => [
          row.name,
          fixed(row.value, row.unit === 'deliveries/s' ? 0 : 2),
          row.unit,
          row.target ?? 'context',
          row.pass === undefined ? '' : row.pass ? 'pass' : 'MISS',
        ]),
      ),
    );
  }
  if (results.scenario && results.scenario.length > 0) {
    out.push('', targetedRows('scenario row (wall time a run)', results.scenario, 1));
  }
  if (results.explore && results.explore.length > 0) {
    out.push('', targetedRows('exploration row (loopback, wall time)', results.explore, 2));
  }
  for (const skipped of results.skipped) out.push('', `skipped: ${skipped.name}: ${skipped.reason}`);
  if (results.ratios.length > 0) {
    out.push(
      '',
      markdown(
        ['comparison (same run)', 'ratio, median', 'min – max', 'target', ''],
        results.ratios.map((r) => [
          r.name,
          fixed(r.median, 2),
          `${fixed(r.min, 2)} – ${fixed(r.max, 2)}`,
          r.target ?? 'context',
          r.pass === undefined ? '' : r.pass ? 'pass' : 'MISS',
        ]),
      ),
    );
  }
  return out.join('\n');
}
