/**
 * `pnpm queue:soak [--engine bullmq|postgres|both] [--fleet] [--notifications 2000] [--copies 3] [--kill-every-ms 1500]`:
 * several machines sharing one queue, with workers dying.
 *
 * Per engine: 3 web processes and 2 workers (scripts/queue-soak-child.ts) on one Redis (BullMQ) or one PostgreSQL
 * (pg-boss). Every notification is delivered `copies` times, each copy to another web process, retried like the
 * service retries a refusal; meanwhile a worker is killed with SIGKILL every `kill-every-ms` and started again.
 * The handlers (two per notification) write a ledger row in the inbox's transaction, so the ledger holds one row per
 * handler run that committed. Checks: every copy was answered 200, exactly one copy per notification was `queued`,
 * every handler ran exactly once per notification (one ledger row each, none missing), no job is dead. The
 * handlers' completions are kept by PostgresInbox for both engines: a handler's effect and its completion commit
 * together, which is what makes "exactly once" hold through a kill -9 (with RedisStore a kill between the effect and
 * the commit runs the handler again: docs/stores.md). Exits 1 on any miss.
 *
 * `--fleet`: the same where a merchant's fleet has outgrown one machine. Every process reaches PostgreSQL through
 * PgBouncer in transaction mode (PGBOUNCER_URL, as `pnpm test:setup` starts it; `prepare: false`), and BullMQ runs on
 * a Redis Cluster of three masters with a replica each (a private one, started here) with `waitForReplicas`; once,
 * a few seconds in, the master holding the queue is killed (SIGKILL), its replica takes over, and it is started
 * again as the new master's replica. docs/scaling-out.md holds its figures.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { migrate } from '@payhook/core/postgres';
import { Redis } from 'ioredis';
import pg from 'pg';
import { purchase } from '../examples/shared/src/deliveries.ts';
import { PrivateRedisCluster } from '../packages/core/test/redis-cluster.ts';
import { dropPgBossQueue } from '../test/support/pg-boss-queue.ts';
import { FORM, signedForm } from '../test/support/signed-form.ts';
import { ROOT } from './check-packages.ts';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'both' },
    fleet: { type: 'boolean', default: false },
    notifications: { type: 'string', default: '2000' },
    copies: { type: 'string', default: '3' },
    'kill-every-ms': { type: 'string', default: '1500' },
    'timeout-s': { type: 'string', default: '240' },
  },
});
const ENGINES = values.engine === 'both' ? ['bullmq', 'postgres'] : [values.engine as string];
const NOTIFICATIONS = Number(values.notifications);
const COPIES = Number(values.copies);
const KILL_EVERY_MS = Number(values['kill-every-ms']);
const TIMEOUT_MS = Number(values['timeout-s']) * 1000;
const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const PGBOUNCER_URL = process.env.PGBOUNCER_URL || 'postgres://postgres@127.0.0.1:6432/test';
const FLEET = values.fleet === true;
const SECRET = randomBytes(24).toString('base64url');

interface Child {
  process: ChildProcess;
  ready: Promise<string>;
}

/** Starts a web process or a worker; `ready` resolves with its URL (web) or '' (worker) once it says so. */
function start(role: 'web' | 'worker', env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/queue-soak-child.ts', role], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('listening on ')) resolve(line.slice('listening on '.length));
      if (line === 'worker ready') resolve('');
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`${role} exited (${code ?? signal}) before ready`)),
    );
  });
  ready.catch(() => {});
  return { process: child, ready };
}

/** Posts one copy until it is answered 200 (as the service retries a 5xx or 409), and returns the outcome. */
/** The refusals of the current soak, by status and code (each one retried, as the service retries them). */
const refusals = new Map<string, number>();

async function deliver(url: string, body: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`${url}/`, { method: 'POST', headers: { 'content-type': FORM }, body });
      const answer = (await res.json()) as { outcome?: string; error?: { code: string } };
      if (res.status === 200) return answer.outcome ?? 'unknown';
      const refusal = `${res.status} ${answer.error?.code}`;
      refusals.set(refusal, (refusals.get(refusal) ?? 0) + 1);
      if (res.status < 409 || attempt > 50) throw new Error(`answered ${res.status} ${answer.error?.code}`);
    } catch (error) {
      if (attempt > 50) throw error;
    }
    await sleep(Math.min(1_000, 20 * attempt));
  }
}

/** Sends every copy of every notification across the web processes, `inFlight` at a time; counts the outcomes. */
async function sendAll(urls: string[], inFlight: number): Promise<Map<string, number>> {
  const copies: { url: string; body: string }[] = [];
  for (let n = 0; n < NOTIFICATIONS; n++) {
    const body = signedForm(purchase({ payment_id: randomUUID(), order_id: `soak-${n}` }), SECRET);
    for (let c = 0; c < COPIES; c++) copies.push({ url: urls[(n + c) % urls.length]!, body });
  }
  const outcomes = new Map<string, number>();
  let next = 0;
  const lane = async () => {
    while (next < copies.length) {
      const copy = copies[next++]!;
      const outcome = await deliver(copy.url, copy.body);
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return outcomes;
}

async function soak(engine: string, pool: pg.Pool): Promise<string[]> {
  const id = randomBytes(4).toString('hex');
  const names = { inbox: `payhook_soak_inbox_${id}`, ledger: `payhook_soak_ledger_${id}` };
  await migrate(pool, { table: names.inbox });
  await pool.query(
    `CREATE TABLE ${names.ledger} (key text NOT NULL, handler text NOT NULL, pid int NOT NULL)`,
  );
  // The fleet's BullMQ runs on a cluster of its own: the soak kills one of its masters.
  const cluster = FLEET && engine === 'bullmq' ? await PrivateRedisCluster.start() : undefined;
  const env = {
    SOAK_ENGINE: engine,
    SOAK_QUEUE: `payhook-soak-${id}`,
    SOAK_INBOX: names.inbox,
    SOAK_LEDGER: names.ledger,
    SOAK_SECRET: SECRET,
    DATABASE_URL: FLEET ? PGBOUNCER_URL : DATABASE_URL,
    REDIS_URL,
    ...(FLEET ? { SOAK_FLEET: '1' } : {}),
    ...(cluster
      ? {
          SOAK_REDIS_CLUSTER: cluster
            .startupNodes()
            .map((n) => n.port)
            .join(','),
        }
      : {}),
  };
  const webs = [0, 1, 2].map(() => start('web', env));
  const workers = [start('worker', env), start('worker', env)];
  const urls = await Promise.all(webs.map((web) => web.ready));
  await Promise.all(workers.map((worker) => worker.ready));
  const failover = cluster ? killTheQueueMaster(cluster) : undefined;
  let kills = 0;
  let killing = true;
  const killer = (async () => {
    while (killing) {
      await sleep(KILL_EVERY_MS);
      if (!killing) break;
      const which = kills % workers.length;
      workers[which]!.process.kill('SIGKILL');
      kills++;
      workers[which] = start('worker', env);
      await workers[which]!.ready;
    }
  })();
  refusals.clear();
  const begun = Date.now();
  const problems: string[] = [];
  try {
    const outcomes = await sendAll(urls, 48);
    const sent = Date.now() - begun;
    const expectedRows = NOTIFICATIONS * 2;
    let rows = 0;
    while (Date.now() - begun < TIMEOUT_MS) {
      rows = Number((await pool.query(`SELECT count(*) AS n FROM ${names.ledger}`)).rows[0].n);
      if (rows >= expectedRows) break;
      await sleep(500);
    }
    killing = false;
    await killer;
    const failedOver = await failover;
    await sleep(2_000); // a late duplicate run would show up here
    const wrong = await pool.query(
      `SELECT key, handler, count(*)::int AS runs FROM ${names.ledger} GROUP BY key, handler HAVING count(*) <> 1`,
    );
    const { distinct, writers } = (
      await pool.query(
        `SELECT count(DISTINCT (key, handler))::int AS distinct, count(DISTINCT pid)::int AS writers FROM ${names.ledger}`,
      )
    ).rows[0];
    const queued = outcomes.get('queued') ?? 0;
    console.log(
      `${engine}: ${NOTIFICATIONS} notifications × ${COPIES} copies answered in ${sent} ms (${JSON.stringify(Object.fromEntries(outcomes))}); ` +
        `${kills} workers killed, ${writers} worker processes wrote the ledger; ` +
        `${distinct} of ${expectedRows} handler runs recorded after ${Date.now() - begun} ms; ` +
        `refused and retried: ${JSON.stringify(Object.fromEntries(refusals))}; ` +
        `${wrong.rowCount} ran more than once` +
        (failedOver ? `; ${failedOver}` : ''),
    );
    // In the fleet, a copy whose job was added but not acknowledged by the replica in time is refused (503
    // queue.unavailable) and its retry, finding the job, is answered duplicate: no copy of it says queued.
    const refusedAfterAdding = FLEET ? (refusals.get('503 queue.unavailable') ?? 0) : 0;
    if (queued > NOTIFICATIONS || queued < NOTIFICATIONS - refusedAfterAdding)
      problems.push(`${engine}: ${queued} copies queued, expected ${NOTIFICATIONS}`);
    if (distinct !== expectedRows)
      problems.push(`${engine}: ${expectedRows - distinct} handler runs missing`);
    for (const row of wrong.rows.slice(0, 5))
      problems.push(`${engine}: ${row.key} ${row.handler} ran ${row.runs} times`);
    if (kills === 0)
      problems.push(`${engine}: no worker was killed (the run was shorter than --kill-every-ms)`);
  } finally {
    killing = false;
    for (const child of [...webs, ...workers]) child.process.kill('SIGKILL');
    await pool.query(`DROP TABLE IF EXISTS ${names.ledger}, ${names.inbox}`);
    if (cluster) await cluster.dispose();
    else await dropQueue(engine, env.SOAK_QUEUE, pool);
  }
  return problems;
}

/**
 * A few seconds in, SIGKILL of the master that holds the queue (its `{bull}` slot), then, once its replica answers
 * as master, the old one started again (it rejoins as the new master's replica); resolves what happened, in words.
 */
async function killTheQueueMaster(cluster: PrivateRedisCluster): Promise<string> {
  const begun = Date.now();
  await sleep(5_000);
  const slot = Number(
    (await cluster.cli(cluster.startupNodes()[0]!.port, 'cluster', 'keyslot', '{bull}')).trim(),
  );
  const { master } = await cluster.shardOf(slot);
  const killedAt = Date.now();
  await cluster.kill(master);
  for (;;) {
    const now = await cluster.shardOf(slot).catch(() => undefined);
    if (now !== undefined && now.master !== master) break;
    await sleep(100);
  }
  const tookOver = Date.now() - killedAt;
  await cluster.restart(master);
  await cluster.healthy();
  return `the queue's Redis master was killed ${killedAt - begun} ms in, its replica answered as master ${tookOver} ms later`;
}

/** Deletes the run's queue: BullMQ's keys (default prefix `bull`), or pg-boss's queue with its jobs. */
async function dropQueue(engine: string, name: string, pool: pg.Pool): Promise<void> {
  if (engine === 'postgres') {
    await dropPgBossQueue(pool, name);
    return;
  }
  const redis = new Redis(REDIS_URL);
  try {
    const keys = await redis.keys(`bull:${name}:*`);
    if (keys.length > 0) await redis.unlink(...keys);
  } finally {
    redis.disconnect();
  }
}

const pool = new pg.Pool({ connectionString: DATABASE_URL });
const problems: string[] = [];
try {
  for (const engine of ENGINES) problems.push(...(await soak(engine, pool)));
} finally {
  await pool.end();
}
for (const problem of problems) console.error(`✘ ${problem}`);
if (problems.length === 0) console.log('✔ every handler ran exactly once per notification; nothing lost');
process.exitCode = problems.length === 0 ? 0 : 1;
