import { createWebhookHandler, type QueuedNotification } from '@payhook/core';
import { createWorker, type QueueEngine, type WorkerOptions } from '@payhook/queue';
import { createBullMQQueue } from '@payhook/queue/bullmq';
import { createPostgresQueue } from '@payhook/queue/postgres';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clusterNodes,
  DATABASE_URL,
  REDIS_CLUSTER_URLS,
  REDIS_URL,
  reachPostgres,
  reachRedis,
  reachRedisCluster,
} from '../../../core/test/servers.js';
import { fakePurchase } from '../fixtures/primary.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const postgresUp = await reachPostgres();
const redisUp = await reachRedis();
const clusterUp = await reachRedisCluster();
// Its own schema and key prefix, so parallel test files and other engineers never share a queue.
const SCHEMA = `payhook_queue_cli_test_${process.pid}`;
const PREFIX = `payhook-cli-test-${process.pid}`;
const QUEUE = 'cli-dead';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function notification(key: string | undefined): QueuedNotification {
  return {
    key,
    data: { order_id: 'order-1', status: 'success', card_token: 'tok_never_printed' },
    secretIndex: 0,
  };
}

async function cli(...args: string[]) {
  const { io, out, err } = memoryIO();
  const code = await runCli(['queue', ...args], io);
  return { code, out, err };
}

const db = ['--database', DATABASE_URL, '--schema', SCHEMA, '--queue', QUEUE];
const redis = ['--redis', REDIS_URL, '--prefix', PREFIX, '--queue', QUEUE];
/** The cluster's nodes, the first two as two flags and the rest in one, comma-separated: both forms are taken. */
const CLUSTER_PREFIX = `{${PREFIX}}`;
const clusterFlags = [
  '--redis-cluster',
  REDIS_CLUSTER_URLS[0]!,
  '--redis-cluster',
  REDIS_CLUSTER_URLS.slice(1).join(','),
  '--prefix',
  CLUSTER_PREFIX,
  '--queue',
  QUEUE,
];

describe('payhook queue: usage', () => {
  it.each([
    [
      ['list'],
      'give one engine: --database URL (PostgreSQL), or --redis URL or --redis-cluster URL (BullMQ).',
    ],
    [['list', '--redis', 'redis://x', '--redis-cluster', 'redis://y'], 'give one engine'],
    [
      ['list', '--redis-cluster', 'redis://x:1,http://user:hunter2@x:1'],
      '--redis-cluster takes redis:// or rediss:// URLs, not "http://x:1".',
    ],
    [
      ['list', '--redis-cluster', 'http://x:1'],
      '--redis-cluster takes redis:// or rediss:// URLs, not "http://x:1".',
    ],
    [
      ['list', '--redis-cluster', 'redis://x', '--prefix', 'bull'],
      '--prefix must hold a hash tag on Redis Cluster, such as "{bull}", so that every key of the queue is in one slot, not "bull".',
    ],
    [['list', '--database', 'postgres://x', '--redis', 'redis://x'], 'give one engine'],
    [['list', '--redis', 'redis://x', '--schema', 's'], '--schema goes with --database.'],
    [
      ['list', '--database', 'postgres://x', '--prefix', 'p'],
      '--prefix goes with --redis or --redis-cluster.',
    ],
    [['drain', ...db], 'the action is list, replay, discard, waiting or purge, not "drain".'],
    [[...db], 'the action is list, replay, discard, waiting or purge, not "".'],
    [['waiting', 'k-1', ...db], 'unexpected argument "k-1".'],
    [['purge', ...db], 'name the waiting notifications to purge (ids or keys), or pass --all.'],
    [['purge', '--all', '--json', ...db], '--json goes with list and waiting.'],
    [['list', 'k-1', ...db], 'unexpected argument "k-1".'],
    [['replay', ...db], 'name the dead notifications to act on (ids or keys), or pass --all.'],
    [['replay', 'k-1', '--all', ...db], 'give ids or --all, not both.'],
    [['discard', 'k-1', '--since', '2026-05-01T00:00:00Z', ...db], '--since goes with --all, not with ids.'],
    [['list', '--since', 'yesterday', ...db], '--since "yesterday" is not an ISO time.'],
    [['replay', '--all', '--json', ...db], '--json goes with list and waiting.'],
  ])('payhook queue %j exits 2: %s', async (args, message) => {
    const { code, err } = await cli(...args);
    expect(code).toBe(2);
    expect(err[0]).toContain(`payhook queue: ${message}`);
    expect(err[1]).toBe("Run 'payhook queue --help' for usage.");
  });

  it('prints its help, listed in the commands of payhook --help', async () => {
    const { code, out } = await cli('--help');
    expect(code).toBe(0);
    expect(out[0]).toMatch(
      /^Usage: payhook queue list\|replay\|discard\|waiting\|purge \(--database URL \| --redis URL \| --redis-cluster URL…\)/,
    );
    const top = memoryIO();
    await runCli(['--help'], top.io);
    expect(top.out[0]).toContain(
      '  queue    list, replay or discard the dead notifications of @payhook/queue; list or purge the waiting ones',
    );
  });
});

/** An engine of the CLI's, the flags that name it, and how the test makes and removes its dead jobs. */
interface Setup {
  readonly up: boolean;
  readonly flags: string[];
  open(name?: string): QueueEngine;
  /** The engine's clock now: the `--since` between two failures. */
  now(): Promise<Date>;
  cleanUp(): Promise<void>;
}

const setups: Array<[string, Setup]> = [
  [
    'PostgreSQL (--database)',
    {
      up: postgresUp,
      flags: db,
      open: (name = QUEUE) =>
        createPostgresQueue({
          connectionString: DATABASE_URL,
          schema: SCHEMA,
          name,
          attempts: 2,
          backoff: { type: 'fixed', delayMs: 0 },
          pollingIntervalMs: 500,
          onError: () => {},
        }),
      now: () => withPool(async (pool) => (await pool.query('SELECT now() AS now')).rows[0].now as Date),
      cleanUp: () =>
        withPool(async (pool) => void (await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`))),
    },
  ],
  [
    'Redis (--redis, BullMQ)',
    {
      up: redisUp,
      flags: redis,
      open: (name = QUEUE) =>
        createBullMQQueue({
          connection: REDIS_URL,
          prefix: PREFIX,
          name,
          attempts: 2,
          backoff: { type: 'fixed', delayMs: 0 },
        }),
      // BullMQ stamps a failure with its worker's clock: this process's.
      now: async () => new Date(),
      cleanUp: async () => {
        const client = new Redis(REDIS_URL);
        try {
          const keys = await client.keys(`${PREFIX}:*`);
          if (keys.length > 0) await client.del(...keys);
        } finally {
          client.disconnect();
        }
      },
    },
  ],
  [
    'Redis Cluster (--redis-cluster, BullMQ)',
    {
      up: clusterUp,
      flags: clusterFlags,
      open: (name = QUEUE) =>
        createBullMQQueue({
          connection: openCluster(),
          prefix: CLUSTER_PREFIX,
          name,
          attempts: 2,
          backoff: { type: 'fixed', delayMs: 0 },
        }),
      now: async () => new Date(),
      cleanUp: async () => {
        for (const cluster of clusters.splice(0)) {
          for (const node of cluster.nodes('master')) {
            const keys = await node.keys(`${CLUSTER_PREFIX}:*`);
            if (keys.length > 0) await node.del(...keys);
          }
          cluster.disconnect();
        }
      },
    },
  ],
];

/** The test's own clients of the shared cluster (an engine leaves an instance it was given open). */
const clusters: Cluster[] = [];
function openCluster(): Cluster {
  const cluster = new Cluster(clusterNodes(), { redisOptions: { maxRetriesPerRequest: null } });
  clusters.push(cluster);
  return cluster;
}

async function withPool<T>(use: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
  try {
    return await use(pool);
  } finally {
    await pool.end();
  }
}

describe.each(setups)('payhook queue on %s', (_, setup) => {
  const db = setup.flags;
  let engine: QueueEngine;
  let failedAfter: Date;

  beforeAll(async () => {
    if (!setup.up) return;
    engine = setup.open();
    // A worker whose every attempt fails: its jobs end dead.
    const consumer = await engine.consume(
      async () => {
        throw Object.assign(new Error('handler "fulfil" failed'), { code: 'handler.failed' });
      },
      { concurrency: 2 },
    );
    const dies = async (key: string | undefined, count: number) => {
      await engine.enqueue(notification(key), new AbortController().signal);
      while ((await engine.dead()).length < count) await sleep(50);
    };
    await dies('purchase:1:success', 1);
    failedAfter = await setup.now();
    await dies('purchase:2:success', 2);
    await dies(undefined, 3);
    await consumer.stop(0);
  });
  afterAll(async () => {
    if (!setup.up) return;
    await engine?.close();
    await setup.cleanUp();
  });

  it.skipIf(!setup.up)(
    'lists the dead notifications, oldest first, without the notification beyond its key',
    async () => {
      const { code, out, err } = await cli('list', ...db);
      expect(code).toBe(0);
      expect(err).toEqual(['3 dead notifications']);
      expect(out).toHaveLength(3);
      expect(out[0]).toMatch(
        /^purchase:1:success\tpurchase:1:success\thandler\.failed\tattempts=2\t\d{4}-\d\d-\d\dT[\d:.]+Z\thandler "fulfil" failed$/,
      );
      expect(out[2]).toMatch(/^[0-9a-f-]{36}\t-\thandler\.failed\t/);
      expect(out.join('\n')).not.toContain('tok_never_printed');
    },
  );

  it.skipIf(!setup.up)('lists JSON lines since a time', async () => {
    const { code, out } = await cli('list', '--json', '--since', failedAfter.toISOString(), ...db);
    expect(code).toBe(0);
    const lines = out.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line.key)).toEqual(['purchase:2:success', null]);
    expect(Object.keys(lines[0]!)).toEqual([
      'id',
      'key',
      'code',
      'message',
      'reason',
      'attempts',
      'queuedAt',
      'failedAt',
    ]);
    expect(lines[0]).toMatchObject({
      code: 'handler.failed',
      message: 'handler "fulfil" failed',
      attempts: 2,
    });
  });

  it.skipIf(!setup.up)(
    'replays by key, says which ids were not dead, then discards all since a time',
    async () => {
      const replayed = await cli('replay', 'purchase:1:success', 'purchase:9:success', ...db);
      expect(replayed.out).toEqual(['replayed 1']);
      expect(replayed.err).toEqual(['1 of the ids given are not dead notifications of this queue.']);
      expect(replayed.code).toBe(1);
      expect((await engine.dead()).map((dead) => dead.job.key)).toEqual(['purchase:2:success', undefined]);

      const discarded = await cli('discard', '--all', '--since', failedAfter.toISOString(), ...db);
      expect(discarded).toMatchObject({ code: 0, out: ['discarded 2'] });
      expect(await cli('list', ...db)).toMatchObject({ code: 0, out: [], err: ['0 dead notifications'] });
    },
  );

  it.skipIf(!setup.up)(
    'escapes a newline, ESC and BEL of a key and a message in list, one line a notification; --json stays JSON',
    async () => {
      const key = 'purchase:7:\n\u001b[2J\u0007success';
      const message = 'failed\r\n\u001b]0;owned\u0007';
      const consumer = await engine.consume(
        async () => {
          throw Object.assign(new Error(message), { code: 'handler.failed' });
        },
        { concurrency: 1 },
      );
      await engine.enqueue(notification(key), new AbortController().signal);
      // The notification the test before replayed fails again beside it.
      const keys = async () => (await engine.dead()).map((dead) => dead.job.key).sort();
      while ((await keys()).join() !== ['purchase:1:success', key].join()) await sleep(50);
      await consumer.stop(0);

      const listed = await cli('list', ...db);
      expect(listed.code).toBe(0);
      expect(listed.out).toHaveLength(2);
      const shownKey = 'purchase:7:\\n\\x1b[2J\\x07success';
      const [id, ...columns] = listed.out.find((printed) => printed.includes('purchase:7:'))!.split('\t');
      expect(columns).toEqual([
        shownKey,
        'handler.failed',
        'attempts=2',
        expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
        'failed\\r\\n\\x1b]0;owned\\x07',
      ]);
      expect(id === shownKey || /^[0-9a-f-]{36}$/.test(id!)).toBe(true);

      const json = await cli('list', '--json', ...db);
      expect(json.out).toHaveLength(2);
      const mine = json.out.find((printed) => printed.includes('purchase:7:'))!;
      expect(JSON.parse(mine)).toMatchObject({ key, message });
      expect(mine).not.toMatch(/\p{Cc}/u);

      expect(await cli('discard', '--all', ...db)).toMatchObject({ code: 0, out: ['discarded 2'] });
    },
  );
});

describe.each(setups)('payhook queue list on %s: the reason of a dead notification', (_, setup) => {
  const flags = [...setup.flags.slice(0, -1), 'cli-reason'];
  // What the handler throws: a courier's answer with a card token in it, on two lines, far over 200 characters.
  const thrown = `courier answered 502\n for ${'x'.repeat(300)} tok_never_printed`;
  let engine: QueueEngine;

  /** Runs one purchase under `key` through a worker of `options` until it is dead. */
  async function dies(key: string, options: WorkerOptions) {
    const webhook = createWebhookHandler({ logger: false, store: false }).on('purchase', () => {
      throw new Error(thrown);
    });
    const worker = await createWorker(webhook, engine, { stopOnSignals: false, logger: false, ...options });
    const count = (await engine.dead()).length;
    const job = { key, data: fakePurchase({ payment_id: key }) as Record<string, unknown>, secretIndex: 0 };
    await engine.enqueue(job, new AbortController().signal);
    while ((await engine.dead()).length === count) await sleep(50);
    await worker.stop();
  }

  beforeAll(async () => {
    if (!setup.up) return;
    engine = setup.open('cli-reason');
    await dies('reason-1', {});
    await dies('reason-2', { failureReason: (error) => (error as Error).message.split(' tok_')[0] });
  });
  afterAll(async () => {
    if (!setup.up) return;
    await engine?.close();
    await setup.cleanUp();
  });

  it.skipIf(!setup.up)(
    'stores no reason by default, and lists the one failureReason gives on one line of at most 200 characters',
    async () => {
      const reason = `courier answered 502 for ${'x'.repeat(175)}…`;
      const { code, out } = await cli('list', ...flags);
      expect(code).toBe(0);
      expect(out).toHaveLength(2);
      expect(out[0]).toMatch(
        /^reason-1\treason-1\thandler\.failed\tattempts=2\t[^\t]+\t\[@payhook\/queue\] a handler failed[^\t]*$/,
      );
      expect(out[1]).toMatch(
        /^reason-2\treason-2\thandler\.failed\tattempts=2\t[^\t]+\t\[@payhook\/queue\] a handler failed[^\t]*\treason: (.*)$/,
      );
      expect(out[1]!.split('\treason: ')[1]).toBe(reason);
      expect(out.join('\n')).not.toContain('tok_never_printed');
      const json = await cli('list', '--json', ...flags);
      expect(json.out.map((line) => (JSON.parse(line) as { reason: unknown }).reason)).toEqual([
        null,
        reason,
      ]);
      expect((await engine.dead()).map((dead) => dead.error.reason)).toEqual([undefined, reason]);
    },
  );
});

describe.each(setups)('payhook queue waiting|purge on %s', (_, setup) => {
  const flags = [...setup.flags.slice(0, -1), 'cli-waiting'];
  let engine: QueueEngine;

  beforeAll(async () => {
    if (!setup.up) return;
    engine = setup.open('cli-waiting');
    // No worker: the jobs wait.
    for (const key of ['waiting:1', 'waiting:2', undefined]) {
      await engine.enqueue(notification(key), new AbortController().signal);
      await sleep(5);
    }
  });
  afterAll(async () => {
    if (!setup.up) return;
    await engine?.close();
    await setup.cleanUp();
  });

  it.skipIf(!setup.up)(
    'lists the waiting notifications, oldest first, then purges them by key and all',
    async () => {
      const listed = await cli('waiting', ...flags);
      expect(listed.code).toBe(0);
      expect(listed.err).toEqual(['3 waiting notifications']);
      expect(listed.out[0]).toMatch(/^waiting:1\twaiting:1\tattempts=0\t\d{4}-\d\d-\d\dT[\d:.]+Z$/);
      expect(listed.out[2]).toMatch(/^[0-9a-f-]{36}\t-\tattempts=0\t/);
      expect(listed.out.join('\n')).not.toContain('tok_never_printed');
      const json = await cli('waiting', '--json', ...flags);
      expect(json.out.map((line) => (JSON.parse(line) as { key: unknown }).key)).toEqual([
        'waiting:1',
        'waiting:2',
        null,
      ]);
      const purged = await cli('purge', 'waiting:1', 'waiting:9', ...flags);
      expect(purged).toMatchObject({
        code: 1,
        out: ['purged 1'],
        err: ['1 of the ids given are not waiting notifications of this queue.'],
      });
      expect(await cli('purge', '--all', ...flags)).toMatchObject({ code: 0, out: ['purged 2'] });
      expect(await cli('waiting', ...flags)).toMatchObject({
        code: 0,
        out: [],
        err: ['0 waiting notifications'],
      });
    },
  );
});
