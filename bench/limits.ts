// The servers' own limits, measured with their own tools on the statements (or scripts) a store sends: pgbench
// (`-M prepared`) and redis-benchmark. A store row is read against these: what the database does with nothing of
// payhook's or Node's in the way.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Pairs (claim and commit, or one inbox transaction) per second, with their latency percentiles in ms. */
export interface Limit {
  rate: number;
  p50: number;
  p99: number;
}

/** True when the tool is on the PATH. */
export async function installed(tool: 'pgbench' | 'redis-benchmark'): Promise<boolean> {
  try {
    await run(tool, ['--version']);
    return true;
  } catch {
    return false;
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

/** Latency percentiles in ms of a list of durations in ms. */
export function percentiles(durations: number[]): { p50: number; p99: number } {
  const sorted = durations.sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

/** A statement as a store sent it (captured through a recording pool). */
export interface SentQuery {
  text: string;
  values?: readonly unknown[];
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') return String(value);
  return `'${String(value).replaceAll("'", "''")}'`;
}

/**
 * A pgbench script of the statements a store sent for one pair, one pgbench transaction per pair: each `$n` that
 * carried the recorded key or token becomes a fresh random 63-bit integer as text (distinct keys, shorter than a
 * real one), every other value the literal it was.
 */
export function pgbenchScript(queries: readonly SentQuery[], key: string, token?: string): string {
  const lines = ['\\set k random(1, 9223372036854775806)'];
  const prepared = new Map<string, { types: string[]; text: string }>();
  for (const query of queries) {
    const values = query.values ?? [];
    // Several statements in one simple query (the inbox's BEGIN and claim) travel in one round trip: a pgbench
    // pipeline, its EXECUTE sent as the statement it runs (pgbench prepares each one itself).
    if (values.length === 0 && query.text.includes(';')) {
      const statements = query.text.split(';').flatMap((text) => executed(text.trim(), prepared, key));
      lines.push('\\startpipeline', ...statements.map((text) => `${text};`), '\\endpipeline');
      continue;
    }
    let text = query.text;
    for (let n = values.length; n >= 1; n--) {
      const value = values[n - 1];
      text = text.replaceAll(
        `$${n}`,
        value === key || (token !== undefined && value === token) ? ':k' : literal(value),
      );
    }
    lines.push(`${text.replace(/\s+/g, ' ')};`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * One statement of a simple query as pgbench sends it: a `PREPARE` is kept (and sent as nothing), an `EXECUTE` of
 * it becomes its statement with each argument cast to its type, the recorded key `:k`.
 */
function executed(
  text: string,
  prepared: Map<string, { types: string[]; text: string }>,
  key: string,
): string[] {
  const prepare = /^PREPARE (\w+) \(([^)]*)\) AS ([\s\S]*)$/.exec(text);
  if (prepare) {
    prepared.set(prepare[1]!, { types: prepare[2]!.split(',').map((t) => t.trim()), text: prepare[3]! });
    return [];
  }
  const execute = /^EXECUTE (\w+)\((.*)\)$/.exec(text);
  const statement = execute && prepared.get(execute[1]!);
  if (!execute || !statement) return [text.replace(/\s+/g, ' ')];
  const args = execute[2]!.split(', ');
  let body = statement.text;
  for (let n = args.length; n >= 1; n--) {
    const arg = args[n - 1] === literal(key) ? ':k' : args[n - 1]!;
    body = body.replaceAll(`$${n}`, `${arg}::${statement.types[n - 1]}`);
  }
  return [body.replace(/\s+/g, ' ')];
}

/** pgbench of `script` with `clients` connections for `seconds`: transactions per second and their latency. */
export async function pgbench(url: string, script: string, clients: number, seconds: number): Promise<Limit> {
  const dir = mkdtempSync(join(tmpdir(), 'payhook-pgbench-'));
  try {
    const file = join(dir, 'script.sql');
    writeFileSync(file, script);
    const threads = String(Math.min(clients, 2));
    const args = ['-n', '-M', 'prepared', '-c', String(clients), '-j', threads, '-T', String(seconds)];
    const { stdout } = await run(
      'pgbench',
      [...args, '-l', '--log-prefix', join(dir, 'log'), '-f', file, url],
      {
        cwd: dir,
      },
    );
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
    if (!tps) throw new Error(`pgbench printed no tps:\n${stdout}`);
    // Per-transaction log lines: client_id transaction_no time_us script_no epoch epoch_us.
    const durations: number[] = [];
    for (const name of readdirSync(dir).filter((n) => n.startsWith('log'))) {
      for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
        const micros = Number(line.split(' ')[2]);
        if (line !== '' && Number.isFinite(micros)) durations.push(micros / 1000);
      }
    }
    return { rate: Number(tps[1]), ...percentiles(durations) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** redis-benchmark of one EVAL on random keys under `prefix`: requests per second and latency percentiles. */
async function redisBenchmark(
  url: string,
  clients: number,
  requests: number,
  command: string[],
): Promise<Limit> {
  const { hostname, port } = new URL(url);
  const args = ['-h', hostname, '-p', port || '6379', '-c', String(clients), '-n', String(requests)];
  const { stdout } = await run('redis-benchmark', [
    ...args,
    '-r',
    '1000000000000',
    '--csv',
    '--precision',
    '3',
    ...command,
  ]);
  // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
  const row = stdout
    .trim()
    .split('\n')
    .at(-1)!
    .split(',')
    .map((cell) => cell.replaceAll('"', ''));
  return { rate: Number(row[1]), p50: Number(row[4]), p99: Number(row[6]) };
}

/**
 * The Redis store's claim and commit, each its recorded EVALSHA (digest, key count, key, arguments) on random keys
 * under `prefix`, run on its own and combined into pairs: 1 / (1 / claims + 1 / commits) per second, latencies
 * added.
 */
export async function redisPairs(
  url: string,
  prefix: string,
  evals: { claim: readonly unknown[]; commit: readonly unknown[] },
  clients: number,
  requests: number,
): Promise<Limit> {
  const key = `${prefix}rb:__rand_int__`;
  const command = (recorded: readonly unknown[]) => [
    'EVALSHA',
    String(recorded[0]),
    '1',
    key,
    ...recorded.slice(3).map(String),
  ];
  const claim = await redisBenchmark(url, clients, requests, command(evals.claim));
  const commit = await redisBenchmark(url, clients, requests, command(evals.commit));
  return {
    rate: 1 / (1 / claim.rate + 1 / commit.rate),
    p50: claim.p50 + commit.p50,
    p99: claim.p99 + commit.p99,
  };
}
