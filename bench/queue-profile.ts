// `tsx --tsconfig bench/tsconfig.json bench/queue-profile.ts [bullmq|postgres|bullmq-floor|postgres-floor] [jobs]`:
// a CPU profile (node:inspector) of one worker phase, payhook's worker or the engine + claim/commit floor, as the
// queue rows run it; prints CPU per job and the self time by package and by function, and writes the .cpuprofile.
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { createWebhookHandler, type DedupeStore } from '@payhook/core';
import { migrate, PostgresStore } from '@payhook/core/postgres';
import { RedisStore } from '@payhook/core/redis';
import { createWorker, type QueueEngine } from '@payhook/queue';
import { createBullMQQueue } from '@payhook/queue/bullmq';
import { createPostgresQueue } from '@payhook/queue/postgres';
import { Redis } from 'ioredis';
import pg from 'pg';
import { SECRET } from './payload.js';
import {
  bullmqAlone,
  claimAndCommit,
  PGBOSS_SCHEMA,
  pgBossAlone,
  queuedElsewhere,
  timeWorker,
  type WorkerRun,
} from './queue-engines.js';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const TABLE = 'payhook_bench_profile_inbox';
const what = process.argv[2] ?? 'bullmq';
const jobs = Number(process.argv[3] ?? 10_000);
const concurrency = 16;
const name = `payhook-profile-${Date.now()}`;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

async function payhookWorker(
  store: DedupeStore,
  queue: QueueEngine,
  queueName: string,
  profile: () => Promise<unknown>,
) {
  let done = 0;
  let finished: () => void = () => {};
  const all = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const webhook = createWebhookHandler({ secret: SECRET, store, queue, logger: false }).onAny(() => {
    if (++done === jobs) finished();
  });
  await queuedElsewhere({
    engine: what.startsWith('bullmq') ? 'bullmq' : 'postgres',
    via: 'payhook',
    url: what.startsWith('bullmq') ? REDIS_URL : DATABASE_URL,
    name: queueName,
    jobs,
  });
  await profile();
  const stop = timeWorker(jobs);
  const worker = await createWorker(webhook, queue, { concurrency, stopOnSignals: false, logger: false });
  await all;
  const run = stop();
  await worker.stop();
  return run;
}

function summary(nodes: ProfileNode[], total: number, key: (node: ProfileNode) => string, top: number) {
  const by = new Map<string, number>();
  for (const node of nodes) by.set(key(node), (by.get(key(node)) ?? 0) + (node.hitCount ?? 0));
  return (
    [...by]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      // Sampled every 100 µs: a sample is 100 µs of this thread's time.
      .map(
        ([k, hits]) =>
          `${((100 * hits) / total).toFixed(1).padStart(5)}% ${((hits * 100) / jobs).toFixed(1).padStart(6)} µs/job  ${k}`,
      )
      .join('\n')
  );
}

function packageOf(url: string): string {
  if (url === '') return '(native, gc, idle)';
  const match = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1]!;
  const own = /packages\/([^/]+)\/dist/.exec(url);
  if (own) return `@payhook/${own[1]}`;
  return url.startsWith('node:') ? 'node internals' : url.replace(/^.*\//, '');
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 100 });
const start = () => session.post('Profiler.start');

/** One worker phase of `jobs` jobs, warm-up or profiled (`begin` starts the profile once the jobs are queued). */
async function phase(
  name: string,
  begin: () => Promise<unknown>,
): Promise<{ run: WorkerRun; cleanup: () => Promise<void> }> {
  let run: WorkerRun;
  let cleanup: () => Promise<void>;
  if (what.startsWith('bullmq')) {
    const client = new Redis(REDIS_URL);
    const store = new RedisStore({ client, prefix: `${name}:` });
    if (what === 'bullmq-floor') {
      run = await bullmqAlone(REDIS_URL, name, {
        jobs,
        concurrency,
        work: claimAndCommit(store),
        beforeWorker: begin,
      });
    } else {
      const queue = await createBullMQQueue({ connection: REDIS_URL, name });
      run = await payhookWorker(store, queue, name, begin);
      await queue.close();
    }
    cleanup = async () => {
      const keys = [...(await client.keys(`bull:${name}:*`)), ...(await client.keys(`${name}:*`))];
      if (keys.length > 0) await client.unlink(...keys);
      client.disconnect();
    };
  } else {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 20 });
    await migrate(pool, { table: TABLE });
    const store = new PostgresStore({ pool, table: TABLE });
    if (what === 'postgres-floor') {
      run = await pgBossAlone(DATABASE_URL, name, {
        jobs,
        concurrency,
        work: claimAndCommit(store),
        beforeWorker: begin,
      });
    } else {
      const queue = await createPostgresQueue({ connectionString: DATABASE_URL, name });
      run = await payhookWorker(store, queue, name, begin);
      await queue.close();
    }
    cleanup = async () => {
      await pool.query(`DROP TABLE IF EXISTS ${TABLE}`);
      await pool.query(`DROP SCHEMA IF EXISTS ${PGBOSS_SCHEMA} CASCADE`);
      await pool.end();
    };
  }
  return { run, cleanup };
}

// A warm-up phase first (JIT, connections, scripts), then the profiled one.
await (await phase(`${name}-warm`, async () => {})).cleanup();
const { run, cleanup } = await phase(name, start);
await cleanup();
console.log(
  `${what}: ${jobs} jobs, ${Math.round(run.rate)} jobs/s, ${run.cpuUsPerJob.toFixed(1)} µs CPU per job`,
);
const { profile } = (await session.post('Profiler.stop')) as { profile: { nodes: ProfileNode[] } };
const file = `/tmp/payhook-${what}-${Date.now()}.cpuprofile`;
await writeFile(file, JSON.stringify(profile));
const busy = profile.nodes.filter(
  (n) => n.callFrame.functionName !== '(idle)' && n.callFrame.functionName !== '(program)',
);
const total = busy.reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
console.log(`profile: ${file}`);
console.log('\nself time by package (busy samples):');
console.log(summary(busy, total, (n) => packageOf(n.callFrame.url), 15));
console.log('\nself time by function:');
console.log(
  summary(
    busy,
    total,
    (n) =>
      `${n.callFrame.functionName || '(anonymous)'} ${packageOf(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`,
    40,
  ),
);
