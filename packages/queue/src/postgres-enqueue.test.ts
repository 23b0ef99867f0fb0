import type { PgQueryable } from '@payhook/core/postgres';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, reachPostgres } from '../../core/test/servers.js';
import { createPostgresQueue } from './postgres.js';
import { JobInserter, type JobSettings } from './postgres-enqueue.js';

const postgresUp = await reachPostgres();
const SCHEMA = `payhook_enqueue_test_${process.pid}`;
const SETTINGS: JobSettings = { retryLimit: 4, retryDelay: 1, retryBackoff: true, expireInSeconds: 60 };
const signal = () => new AbortController().signal;

/** A database that records each statement's jobs and answers that all of them were inserted, `existing` aside. */
function fakeDb(existing: readonly string[] = []) {
  const batches: { id: string }[][] = [];
  const db: PgQueryable = {
    async query(_text, values) {
      const jobs = JSON.parse(values![0] as string) as { id: string }[];
      batches.push(jobs);
      const rows = jobs.filter((job) => !existing.includes(job.id)).map(({ id }) => ({ id }));
      return { rows, rowCount: rows.length };
    },
  };
  return { db, batches };
}

describe('JobInserter', () => {
  it('sends a lone job at once, and the jobs that come meanwhile together in the next statements', async () => {
    const { db, batches } = fakeDb();
    const inserter = new JobInserter(db, 's', 'q', SETTINGS);
    const jobs = Array.from({ length: 50 }, (_, i) => ({ id: `id-${i}`, data: { i } }));
    expect(await Promise.all(jobs.map((job) => inserter.insert(job)))).toEqual(jobs.map(() => true));
    // Four statements under way at once (one job each), then the 46 that waited in one.
    expect(batches.map((batch) => batch.length)).toEqual([1, 1, 1, 1, 46]);
    expect(batches.flat().map((job) => job.id)).toEqual(jobs.map((job) => job.id));
  });

  it('answers true only to the first enqueue of an id in a batch, and false to an id the table holds', async () => {
    const { db, batches } = fakeDb(['held']);
    const inserter = new JobInserter(db, 's', 'q', SETTINGS);
    const ids = ['a', 'b', 'c', 'd', 'x', 'x', 'held', 'x', 'y'];
    const answers = await Promise.all(ids.map((id) => inserter.insert({ id, data: {} })));
    expect(answers).toEqual([true, true, true, true, true, false, false, false, true]);
    expect(batches.at(-1)!.map((job) => job.id)).toEqual(['x', 'held', 'y']);
  });

  it('rejects only the enqueue whose job PostgreSQL refuses: the others of its statement are tried alone', async () => {
    const statements: string[][] = [];
    const db: PgQueryable = {
      async query(_text, values) {
        const ids = (JSON.parse(values![0] as string) as { id: string }[]).map(({ id }) => id);
        statements.push(ids);
        if (ids.includes('bad')) throw new Error('unsupported Unicode escape sequence');
        return { rows: ids.map((id) => ({ id })), rowCount: ids.length };
      },
    };
    const inserter = new JobInserter(db, 's', 'q', { ...SETTINGS, retryBackoff: false });
    const ids = ['a', 'b', 'c', 'd', 'e', 'bad', 'f'];
    const answers = await Promise.allSettled(ids.map((id) => inserter.insert({ id, data: {} })));
    expect(answers.map((answer) => answer.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect((answers[5] as PromiseRejectedResult).reason).toEqual(
      new Error('unsupported Unicode escape sequence'),
    );
    expect(statements.slice(4)).toEqual([['e', 'bad', 'f'], ['e'], ['bad'], ['f']]);
  });
});

describe.skipIf(!postgresUp)('the batched enqueue on PostgreSQL', () => {
  let pool: pg.Pool;
  let boss: PgBoss;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
    boss = new PgBoss({
      db: { executeSql: (text, values) => pool.query(text, values) },
      schema: SCHEMA,
      schedule: false,
      supervise: false,
    } as PgBoss.ConstructorOptions);
    boss.on('error', () => {});
    await boss.start();
  });
  afterAll(async () => {
    await boss?.stop({ graceful: false, close: false });
    await pool?.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await pool?.end();
  });

  /** The columns pg-boss sets when it inserts a job, its times as durations from `start_after`. */
  async function columnsOf(id: string) {
    const { rows } = await pool.query(
      `SELECT name, data, priority, state, singleton_key, singleton_on, dead_letter, policy, retry_limit,
         retry_delay, retry_backoff, retry_count, expire_in, keep_until - start_after AS kept,
         start_after <= now() AS due FROM ${SCHEMA}.job WHERE id = $1`,
      [id],
    );
    return rows[0] as Record<string, unknown>;
  }

  it.each([
    [
      'exponential',
      { attempts: 5, backoff: { type: 'exponential', delayMs: 2_000 } },
      { retryBackoff: true },
    ],
    ['fixed', { attempts: 2, backoff: { type: 'fixed', delayMs: 0 } }, { retryBackoff: false }],
  ] as const)(
    'writes the row pg-boss send writes with the same options (%s backoff)',
    async (_, options, boss_) => {
      const name = `same-${boss_.retryBackoff}`;
      const queue = createPostgresQueue({ pool, schema: SCHEMA, name, stallMs: 90_000, ...options });
      try {
        expect(await queue.enqueue({ key: 'k', data: { a: 1 }, secretIndex: 0 }, signal())).toBe('queued');
        const [batched] = (await pool.query(`SELECT id, data FROM ${SCHEMA}.job WHERE name = $1`, [name]))
          .rows;
        const id = await boss.send(name, batched.data, {
          retryLimit: options.attempts - 1,
          retryDelay: options.backoff.delayMs / 1000,
          retryBackoff: boss_.retryBackoff,
          expireInSeconds: 90,
        });
        expect(await columnsOf(batched.id)).toEqual(await columnsOf(id!));
      } finally {
        await queue.close();
      }
    },
  );
});
