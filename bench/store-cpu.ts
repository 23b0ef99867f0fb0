// `tsx --tsconfig bench/tsconfig.json bench/store-cpu.ts [seconds]`: where a PostgreSQL store's pair goes, in CPU.
// For each store, at 1 and 50 in flight: the Node client's CPU per claim+commit pair (process.cpuUsage) and its
// backends' (from /proc), beside pgbench of the same statements (its process and its backends, from /proc, over
// the middle of its run). On 2 cores a client's CPU is taken from the server's, so the pair rate a client reaches
// is bounded by 2 cores / (client + server CPU per pair). Linux only; PostgreSQL on this machine.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DedupeStore, TransactionalStore } from '@payhook/core';
import { createIdSource } from './payload.js';
import { claimOnce, recordScripts } from './stores.js';

const TICK_US = 10_000; // CLK_TCK 100
const TABLE = 'payhook_cpu_inbox';
const APP = `payhook-cpu-${process.pid}`;
const seconds = Number(process.argv[2] ?? 3);
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** CPU time in µs of the processes `pids` (user + system, all threads). */
function cpuOf(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return ticks * TICK_US;
}

const { default: pg } = await import('pg');
const { PostgresStore, PostgresInbox, migrate } = await import('@payhook/core/postgres');
const admin = new pg.Client({ connectionString: url });
await admin.connect();
const backends = async (app: string) =>
  (await admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app])).rows.map(
    (r: { pid: number }) => r.pid,
  );

interface Cost {
  rate: number;
  client: number;
  server: number;
}

async function measureStore(store: DedupeStore | TransactionalStore, inFlight: number): Promise<Cost> {
  const nextId = createIdSource();
  const pids = await backends(APP);
  const deadline = performance.now() + seconds * 1000;
  let pairs = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      await claimOnce(store, `${nextId()}:purchase:success:1000`);
      pairs++;
    }
  };
  const server0 = cpuOf(pids);
  const client0 = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const client = process.cpuUsage(client0);
  return {
    rate: pairs / elapsed,
    client: (client.user + client.system) / pairs,
    server: (cpuOf(pids) - server0) / pairs,
  };
}

async function measurePgbench(script: string, clients: number): Promise<Cost> {
  const dir = mkdtempSync(join(tmpdir(), 'payhook-cpu-'));
  const app = `${APP}-pgbench`;
  try {
    writeFileSync(join(dir, 'script.sql'), script);
    const args = ['-n', '-M', 'prepared', '-c', String(clients), '-j', String(Math.min(clients, 2))];
    const child = execFile(
      'pgbench',
      [...args, '-T', String(seconds + 1), '-l', '--log-prefix', join(dir, 'log'), '-f', 'script.sql', url],
      { cwd: dir, env: { ...process.env, PGAPPNAME: app } },
    );
    const done = new Promise((resolve) => child.on('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const pids = await backends(app);
    const from = { at: Date.now() * 1000, server: cpuOf(pids), client: cpuOf([child.pid!]) };
    await new Promise((resolve) => setTimeout(resolve, (seconds - 0.5) * 1000));
    const to = { at: Date.now() * 1000, server: cpuOf(pids), client: cpuOf([child.pid!]) };
    await done;
    // Log lines: client_id transaction_no time_us script_no epoch epoch_us (the transaction's end).
    let pairs = 0;
    for (const name of readdirSync(dir).filter((n) => n.startsWith('log'))) {
      for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
        const f = line.split(' ');
        const end = Number(f[4]) * 1e6 + Number(f[5]);
        if (end >= from.at && end < to.at) pairs++;
      }
    }
    return {
      rate: pairs / ((to.at - from.at) / 1e6),
      client: (to.client - from.client) / pairs,
      server: (to.server - from.server) / pairs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const pool = new pg.Pool({ connectionString: url, max: 20, idleTimeoutMillis: 0, application_name: APP });
await migrate(pool, { table: TABLE });
const { storeScript, inboxScript } = await recordScripts(pool, TABLE);
const stores: [string, DedupeStore | TransactionalStore, string][] = [
  ['PostgresStore (batch: false)', new PostgresStore({ pool, table: TABLE, batch: false }), storeScript],
  ['PostgresInbox', new PostgresInbox({ pool, table: TABLE }), inboxScript],
];
const us = (n: number) => n.toFixed(0).padStart(5);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; ${seconds} s per row`,
);
console.log('| row | in flight | pairs/s | client µs CPU/pair | server µs CPU/pair | sum |');
console.log('| --- | --- | --- | --- | --- | --- |');
try {
  for (const [, store] of stores) await measureStore(store, 20); // warm-up: connections and plans
  for (const inFlight of [1, 50]) {
    for (const [name, store, script] of stores) {
      for (const [row, cost] of [
        [name, await measureStore(store, inFlight)],
        [
          `pgbench of its statements -c ${Math.min(inFlight, 20)}`,
          await measurePgbench(script, Math.min(inFlight, 20)),
        ],
      ] as const) {
        console.log(
          `| ${row} | ${inFlight} | ${us(cost.rate)} | ${us(cost.client)} | ${us(cost.server)} | ${us(cost.client + cost.server)} |`,
        );
      }
    }
  }
} finally {
  await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
  await pool.end();
  await admin.end();
}
