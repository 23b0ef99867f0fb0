import type { QueuedNotification } from '@payhook/core';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  CuttableProxy,
  DATABASE_URL,
  PGBOUNCER_URL,
  reachPgBouncer,
  reachPostgres,
} from '../../core/test/servers.js';
import type { JobAttempt } from './engine.js';
import { createPostgresQueue, type PostgresQueue, type PostgresQueueOptions } from './postgres.js';
import { jobIdOf } from './postgres-job.js';

const postgresUp = await reachPostgres();
const bouncerUp = postgresUp && (await reachPgBouncer());

/**
 * Every test runs twice: with the engine's connections to PostgreSQL, and through PgBouncer in transaction mode in
 * front of it (as a merchant's platform puts it), each in a schema of its own (per file, process and connection, so
 * parallel files and other engineers never share pg-boss's tables). The test's own checks read PostgreSQL directly.
 */
const CONNECTIONS = [
  {
    via: 'straight to PostgreSQL',
    up: postgresUp,
    url: DATABASE_URL,
    schema: `payhook_queue_test_${process.pid}`,
  },
  {
    via: 'through PgBouncer',
    up: bouncerUp,
    url: PGBOUNCER_URL,
    schema: `payhook_queue_test_pgb_${process.pid}`,
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const signal = () => new AbortController().signal;

function latch(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** Polls until `probe` returns something truthy (a bound against hanging, not a measure of speed). */
async function until<T>(probe: () => Promise<T | undefined | false>, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await probe();
    if (value) return value;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

function job(key: string | undefined, extra: Partial<QueuedNotification> = {}): QueuedNotification {
  return {
    key,
    data: { order_id: key ?? 'none', status: 'success', amount: 9.99 },
    secretIndex: 0,
    ...extra,
  };
}

describe.each(CONNECTIONS)(
  'the PostgreSQL queue engine (pg-boss) $via',
  ({ up, url: ENGINE_URL, schema: SCHEMA }) => {
    // Every test below skips when its server is not there (reachPostgres / reachPgBouncer said so, loudly).
    const it = up ? test : test.skip;
    let pool: pg.Pool;
    let queues = 0;
    const opened: PostgresQueue[] = [];

    beforeAll(() => {
      pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((queue) => queue.close()));
    });
    afterAll(async () => {
      await pool?.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
      await pool?.end();
    });

    /** A queue of its own (a new name: its own pg-boss partition), with retries and stall detection in seconds. */
    function engine(options: Partial<PostgresQueueOptions> = {}): { queue: PostgresQueue; name: string } {
      const name = `test-${++queues}`;
      const queue = createPostgresQueue({
        connectionString: ENGINE_URL,
        schema: SCHEMA,
        name,
        backoff: { type: 'fixed', delayMs: 0 },
        stallMs: 2_000,
        maintenanceIntervalMs: 1_000,
        pollingIntervalMs: 500,
        onError: () => {},
        ...options,
      });
      opened.push(queue);
      return { queue, name };
    }

    async function rowsOf(name: string, key?: string) {
      const { rows } = await pool.query(
        `SELECT id, state, retry_count, started_on, data, output FROM ${SCHEMA}.job
       WHERE name = $1 AND ($2::uuid IS NULL OR id = $2)`,
        [name, key === undefined ? null : jobIdOf(key)],
      );
      return rows as {
        id: string;
        state: string;
        retry_count: number;
        started_on: Date | null;
        data: unknown;
        output: unknown;
      }[];
    }

    const stateOf = async (name: string, key: string) => (await rowsOf(name, key))[0]?.state;
    const reaches = (name: string, key: string, state: string) =>
      until(async () => (await stateOf(name, key)) === state, `${key} to be ${state}`);

    describe('enqueue', () => {
      it('answers duplicate for a key whose job is queued, running, completed or dead, and never adds it twice', async () => {
        const { queue, name } = engine({ attempts: 1 });
        expect(await queue.enqueue(job('k-queued'), signal())).toBe('queued');
        expect(await queue.enqueue(job('k-queued'), signal())).toBe('duplicate');

        for (const key of ['k-running', 'k-done', 'k-dead']) await queue.enqueue(job(key), signal());
        const entered = latch();
        const release = latch();
        await queue.consume(
          async ({ key }) => {
            if (key === 'k-dead') throw new Error('no');
            if (key === 'k-running') {
              entered.open();
              await release.opened;
            }
          },
          { concurrency: 4 },
        );
        await entered.opened;
        expect(await stateOf(name, 'k-running')).toBe('active');
        expect(await queue.enqueue(job('k-running'), signal())).toBe('duplicate');
        await reaches(name, 'k-done', 'completed');
        expect(await queue.enqueue(job('k-done'), signal())).toBe('duplicate');
        await reaches(name, 'k-dead', 'failed');
        expect(await queue.enqueue(job('k-dead'), signal())).toBe('duplicate');
        release.open();
        await reaches(name, 'k-running', 'completed');
        expect(await queue.enqueue(job('k-running'), signal())).toBe('duplicate');
        expect((await rowsOf(name)).length).toBe(4);
      });

      it('queues one job for 200 concurrent copies from two engines (two pools), and answers the 199 others duplicate', async () => {
        const { queue, name } = engine();
        const other = createPostgresQueue({
          connectionString: ENGINE_URL,
          schema: SCHEMA,
          name,
          onError: () => {},
        });
        opened.push(other);
        const answers = await Promise.all(
          Array.from({ length: 200 }, (_, i) => (i % 2 ? other : queue).enqueue(job('k-race'), signal())),
        );
        expect(answers.filter((a) => a === 'queued')).toHaveLength(1);
        expect(answers.filter((a) => a === 'duplicate')).toHaveLength(199);
        expect(await rowsOf(name)).toHaveLength(1);
      });

      it('queues every copy of a notification without a key, each under a random id', async () => {
        const { queue, name } = engine();
        expect(await queue.enqueue(job(undefined), signal())).toBe('queued');
        expect(await queue.enqueue(job(undefined), signal())).toBe('queued');
        const rows = await rowsOf(name);
        expect(rows).toHaveLength(2);
        expect(rows[0]!.id).not.toBe(rows[1]!.id);
      });

      it('stores the queued notification and nothing else: key, data, secret position and id', async () => {
        const { queue, name } = engine();
        await queue.enqueue({ ...job('k-data', { secretIndex: 1, secretId: 'old' }) }, signal());
        const [row] = await rowsOf(name, 'k-data');
        expect(row!.data).toEqual({
          key: 'k-data',
          data: { order_id: 'k-data', status: 'success', amount: 9.99 },
          secretIndex: 1,
          secretId: 'old',
        });
      });

      it('rejects when its signal aborts while PostgreSQL stalls; the job is then there whole, or not at all', async () => {
        const proxy = await CuttableProxy.start({
          host: '127.0.0.1',
          port: Number(new URL(ENGINE_URL).port || 5432),
        });
        try {
          const url = new URL(ENGINE_URL);
          url.host = `127.0.0.1:${proxy.port}`;
          const { queue, name } = engine({ connectionString: url.href });
          await queue.enqueue(job('k-warm'), signal());
          proxy.stall();
          const controller = new AbortController();
          const stalled = queue.enqueue(job('k-stall'), controller.signal);
          controller.abort();
          await expect(stalled).rejects.toThrow('[@payhook/queue] PostgreSQL did not take the job in time');
          const aborted = new AbortController();
          aborted.abort();
          await expect(queue.enqueue(job('k-never'), aborted.signal)).rejects.toThrow('in time');
          proxy.resume();
          await queue.enqueue(job('k-stall'), signal());
          const rows = await rowsOf(name, 'k-stall');
          expect(rows).toHaveLength(1);
          expect(rows[0]!.data).toMatchObject({ key: 'k-stall', secretIndex: 0 });
          expect(await rowsOf(name, 'k-never')).toEqual([]);
        } finally {
          await proxy.close();
        }
      });
    });

    describe('consume', () => {
      it('runs each job once, at most `concurrency` at a time, with its notification and attempt', async () => {
        const { queue } = engine();
        const keys = Array.from({ length: 20 }, (_, i) => `k-${i}`);
        for (const key of keys) await queue.enqueue(job(key, { secretId: 'current' }), signal());
        const ran: string[] = [];
        let running = 0;
        let most = 0;
        await queue.consume(
          async (queued, attempt) => {
            running++;
            most = Math.max(most, running);
            expect(queued).toEqual(job(queued.key, { secretId: 'current' }));
            expect([attempt.number, attempt.of, attempt.signal.aborted]).toEqual([1, 10, false]);
            await sleep(5);
            ran.push(queued.key!);
            running--;
          },
          { concurrency: 4 },
        );
        await until(async () => ran.length === 20, '20 runs');
        expect([...ran].sort()).toEqual([...keys].sort());
        expect(most).toBeLessThanOrEqual(4);
      });

      it('retries a run that rejects with the attempt numbers, then keeps it dead with only its code and message', async () => {
        const { queue, name } = engine({ attempts: 3 });
        await queue.enqueue(job('k-retry'), signal());
        const attempts: [number, number][] = [];
        let fixed = false;
        await queue.consume(
          async (_job, attempt: JobAttempt) => {
            attempts.push([attempt.number, attempt.of]);
            if (fixed) return;
            throw Object.assign(new Error('handler "fulfil" failed'), {
              code: 'handler.failed',
              payload: { card_token: 'tok_secret' },
              cause: new Error('secret cause'),
            });
          },
          { concurrency: 1 },
        );
        const [dead] = await until(async () => {
          const list = await queue.dead();
          return list.length > 0 && list;
        }, 'the dead job');
        expect(attempts).toEqual([
          [1, 3],
          [2, 3],
          [3, 3],
        ]);
        expect(dead).toMatchObject({
          id: 'k-retry',
          job: job('k-retry'),
          error: { code: 'handler.failed', message: 'handler "fulfil" failed' },
          attempts: 3,
        });
        expect(dead!.failedAt.getTime()).toBeGreaterThanOrEqual(dead!.queuedAt.getTime());
        expect((await rowsOf(name, 'k-retry'))[0]!.output).toEqual({
          code: 'handler.failed',
          message: 'handler "fulfil" failed',
        });

        fixed = true;
        expect(await queue.replay({ ids: ['k-retry'] })).toBe(1);
        expect(await queue.replay({ ids: ['k-retry'] })).toBe(0);
        await reaches(name, 'k-retry', 'completed');
        expect(attempts.slice(3)).toEqual([[1, 3]]);
        expect(await queue.dead()).toEqual([]);
      });

      it('hands a running job back on stop(0), without spending its attempt, to the next consumer', async () => {
        const { queue, name } = engine();
        await queue.enqueue(job('k-stop'), signal());
        const entered = latch();
        let reason: unknown;
        const first = await queue.consume(
          async (_job, attempt) => {
            entered.open();
            await new Promise((resolve) => attempt.signal.addEventListener('abort', resolve));
            reason = attempt.signal.reason;
          },
          { concurrency: 1 },
        );
        await entered.opened;
        await first.stop(0);
        expect(String(reason)).toContain('was handed back: the worker stopped');
        expect(await rowsOf(name, 'k-stop')).toMatchObject([
          { state: 'retry', retry_count: 0, started_on: null },
        ]);

        const seen: [string | undefined, number][] = [];
        await queue.consume(async (queued, attempt) => void seen.push([queued.key, attempt.number]), {
          concurrency: 1,
        });
        await reaches(name, 'k-stop', 'completed');
        expect(seen).toEqual([['k-stop', 1]]);
      });
      /** A pool through a proxy the test cuts, counting the queries that fail and succeed; its own errors muted. */
      async function cuttablePool() {
        const proxy = await CuttableProxy.start({
          host: '127.0.0.1',
          port: Number(new URL(ENGINE_URL).port || 5432),
        });
        const url = new URL(ENGINE_URL);
        url.host = `127.0.0.1:${proxy.port}`;
        const through = new pg.Pool({ connectionString: url.href, max: 2 });
        through.on('error', () => {});
        const queries = { failed: 0, succeeded: 0 };
        const pool = {
          query: (text: string, values?: unknown[]) =>
            through.query(text, values).then(
              (result) => {
                queries.succeeded++;
                return result;
              },
              (error: unknown) => {
                queries.failed++;
                throw error;
              },
            ),
        } as unknown as pg.Pool;
        const close = async () => {
          await proxy.close();
          await through.end();
        };
        return { proxy, pool, queries, close };
      }

      it('keeps consuming through a PostgreSQL outage: its fetches fail, nothing rejects unhandled, and it takes jobs once PostgreSQL is back', async () => {
        const { proxy, pool, queries, close } = await cuttablePool();
        const unhandled: unknown[] = [];
        const onUnhandled = (reason: unknown) => unhandled.push(reason);
        process.on('unhandledRejection', onUnhandled);
        try {
          const { queue, name } = engine({ connectionString: undefined, pool });
          const direct = engine({ name }).queue;
          await queue.enqueue(job('k-before'), signal());
          const ran: string[] = [];
          await queue.consume(async (queued) => void ran.push(queued.key!), { concurrency: 1 });
          await until(async () => ran.includes('k-before'), 'the job before the outage');
          proxy.cut();
          await until(async () => queries.failed >= 2, 'two fetches to meet the outage');
          await direct.enqueue(job('k-during'), signal());
          proxy.restore();
          await until(async () => ran.includes('k-during'), 'the job queued during the outage');
          expect(unhandled).toEqual([]);
          expect(ran).toEqual(['k-before', 'k-during']);
        } finally {
          process.off('unhandledRejection', onUnhandled);
          await close();
        }
      });

      it('reports an outage to onError once when its fetches start failing, nothing while healthy or on recovery, and again on the next outage', async () => {
        const { proxy, pool, queries, close } = await cuttablePool();
        const errors: Error[] = [];
        try {
          // No maintenance within the test: only the consumer's fetches query while no job runs.
          const { queue, name } = engine({
            connectionString: undefined,
            pool,
            maintenanceIntervalMs: 86_399_000,
            onError: (error) => errors.push(error),
          });
          const direct = engine({ name }).queue;
          const ran: string[] = [];
          await queue.consume(async (queued) => void ran.push(queued.key!), { concurrency: 1 });
          const polls = async (count: number, which: 'failed' | 'succeeded') => {
            const from = queries[which];
            await until(async () => queries[which] >= from + count, `${count} more fetches ${which}`);
          };
          await polls(3, 'succeeded');
          expect(errors).toEqual([]);

          for (const outage of [1, 2]) {
            proxy.cut();
            await polls(3, 'failed');
            expect(errors).toHaveLength(outage);
            expect(errors[outage - 1]!.message).toMatch(
              /^\[@payhook\/queue\] fetching jobs failed \(reported once until a fetch succeeds again\): /,
            );
            expect(errors[outage - 1]!.cause).toBeInstanceOf(Error);
            await direct.enqueue(job(`k-outage-${outage}`), signal());
            proxy.restore();
            await until(
              async () => ran.includes(`k-outage-${outage}`),
              `the job queued during outage ${outage}`,
            );
            await polls(3, 'succeeded');
            expect(errors).toHaveLength(outage);
          }
        } finally {
          await close();
        }
      });
    });

    describe('dead, replay, discard', () => {
      async function deadQueue() {
        const { queue, name } = engine({ attempts: 1 });
        const consumer = await queue.consume(
          async () => {
            throw Object.assign(new Error('down'), { code: 'store.unavailable' });
          },
          { concurrency: 1 },
        );
        const dies = async (notification: QueuedNotification, count: number) => {
          await queue.enqueue(notification, signal());
          await until(async () => (await queue.dead()).length === count, `${count} dead`);
        };
        return { queue, name, consumer, dies };
      }

      it('lists dead jobs oldest first, since a time and up to a limit, and replays or discards those', async () => {
        const { queue, consumer, dies } = await deadQueue();
        await dies(job('k-old'), 1);
        const { rows } = await pool.query('SELECT now() AS now');
        const since = (rows[0] as { now: Date }).now;
        await dies(job('k-new'), 2);
        await consumer.stop(0);

        expect((await queue.dead()).map((d) => d.id)).toEqual(['k-old', 'k-new']);
        expect((await queue.dead({ since })).map((d) => d.id)).toEqual(['k-new']);
        expect((await queue.dead({ limit: 1 })).map((d) => d.id)).toEqual(['k-old']);
        expect((await queue.dead())[0]).toMatchObject({
          error: { code: 'store.unavailable', message: 'down' },
        });

        expect(await queue.replay({ all: true, since })).toBe(1);
        expect((await queue.dead()).map((d) => d.id)).toEqual(['k-old']);
        expect(await queue.discard({ all: true })).toBe(1);
        expect(await queue.dead()).toEqual([]);
      });

      it('names a dead job without a key by its id, and replays it by that id', async () => {
        const { queue, name, consumer, dies } = await deadQueue();
        await dies(job(undefined), 1);
        await consumer.stop(0);
        const [dead] = await queue.dead();
        expect(dead!.id).toMatch(/^[0-9a-f-]{36}$/);
        expect(dead!.job.key).toBeUndefined();
        expect(await queue.replay({ ids: [dead!.id.toUpperCase()] })).toBe(1);
        expect((await rowsOf(name))[0]).toMatchObject({ state: 'created', retry_count: 0, output: null });
      });
    });

    describe('options', () => {
      it.each([
        [{}, 'give createPostgresQueue either connectionString or pool.'],
        [
          { connectionString: DATABASE_URL, pool: { query: async () => ({ rows: [], rowCount: 0 }) } },
          'give createPostgresQueue either connectionString or pool.',
        ],
        [
          { connectionString: DATABASE_URL, schema: 'Bad-Schema' },
          'the schema "Bad-Schema" is not a lower-case identifier',
        ],
        [
          { connectionString: DATABASE_URL, stallMs: 86_400_000 },
          'stallMs must be an integer from 1 to 86399000, not 86400000.',
        ],
        [
          { connectionString: DATABASE_URL, pollingIntervalMs: 100 },
          'pollingIntervalMs must be an integer from 500, not 100.',
        ],
      ])('refuses %j', (options, message) => {
        expect(() => createPostgresQueue(options as PostgresQueueOptions)).toThrow(
          `[@payhook/queue] ${message}`,
        );
      });

      it('lists, replays and discards nothing on a schema where no queue ran, and creates nothing there', async () => {
        const schema = `${SCHEMA}_none`;
        const queue = createPostgresQueue({ connectionString: ENGINE_URL, schema, onError: () => {} });
        opened.push(queue);
        expect(await queue.dead()).toEqual([]);
        expect(await queue.replay({ all: true })).toBe(0);
        expect(await queue.discard({ ids: ['k-1'] })).toBe(0);
        const { rows } = await pool.query('SELECT to_regnamespace($1) AS schema', [schema]);
        expect(rows).toEqual([{ schema: null }]);
      });

      it('runs on a pool it was given and leaves it open on close()', async () => {
        const given = new pg.Pool({ connectionString: ENGINE_URL, max: 2 });
        try {
          const queue = createPostgresQueue({
            pool: given,
            schema: SCHEMA,
            name: `test-${++queues}`,
            onError: () => {},
          });
          expect(await queue.enqueue(job('k-pool'), signal())).toBe('queued');
          await queue.close();
          await expect(queue.enqueue(job('k-pool-2'), signal())).rejects.toThrow('closed');
          expect((await given.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
        } finally {
          await given.end();
        }
      });
    });
  },
);
