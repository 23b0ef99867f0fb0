import type PgBoss from 'pg-boss';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JobRunner } from './engine.js';
import { PostgresConsumer } from './postgres-consumer.js';
import type { PostgresJobs } from './postgres-sql.js';

function latch(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/**
 * pg-boss as the consumer uses it: `fetch` hands out the queued ids, `complete` records each statement's ids and
 * answers once `completing` opens (at once by default) or rejects with `failure`.
 */
function fakeBoss(queued: string[]) {
  const statements: string[][] = [];
  /** The slots each fetch asked for, as it began. */
  const fetches: number[] = [];
  const state = {
    completing: Promise.resolve(),
    fetching: Promise.resolve(),
    failure: undefined as Error | undefined,
  };
  const waiting: { count: number; open: () => void }[] = [];
  /** Resolves once `count` jobs went in completion statements: no timer, so it works under fake timers too. */
  const completed = (count: number) => {
    const { open, opened } = latch();
    waiting.push({ count, open });
    return opened;
  };
  const boss = {
    async fetch(_name: string, options: { batchSize: number }) {
      fetches.push(options.batchSize);
      await state.fetching;
      const ids = queued.splice(0, options.batchSize);
      return ids.map((id) => ({
        id,
        data: { key: id, data: {}, secretIndex: 0 },
        retryCount: 0,
        retryLimit: 2,
        createdOn: new Date(0),
      }));
    },
    async complete(_name: string, ids: string | string[]) {
      statements.push(Array.isArray(ids) ? [...ids] : [ids]);
      for (const w of waiting) if (statements.flat().length >= w.count) w.open();
      await state.completing;
      if (state.failure) throw state.failure;
      return {};
    },
  };
  return { boss: boss as unknown as PgBoss, statements, fetches, state, completed };
}

const consumers: PostgresConsumer[] = [];

function consumer(boss: PgBoss, run: JobRunner, concurrency: number, onError = (_: Error) => {}) {
  const jobs = { heartbeat: async () => new Set(), handBack: async () => {} } as unknown as PostgresJobs;
  const sql: PgBoss.Db = { executeSql: async () => ({ rows: [] }) };
  const setup = { boss, sql, jobs, name: 'q', concurrency, pollingMs: 60_000, heartbeatMs: 60_000, onError };
  const created = new PostgresConsumer(setup, run);
  consumers.push(created);
  return created;
}

describe('PostgresConsumer, completing jobs', () => {
  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(consumers.splice(0).map((c) => c.stop(0)));
  });

  it('completes a lone job at once, and the jobs that settle meanwhile together in one statement', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `j${i}`);
    const { boss, statements, state } = fakeBoss([...ids]);
    const first = latch();
    state.completing = first.opened;
    const ran: string[] = [];
    const allRan = latch();
    consumer(
      boss,
      async (job) => {
        ran.push(job.key!);
        if (ran.length === ids.length) allRan.open();
      },
      8,
    );
    await allRan.opened;
    await vi.waitFor(() => expect(statements).toEqual([['j0']]));
    first.open();
    await vi.waitFor(() => expect(statements).toEqual([['j0'], ids.slice(1)]));
  });

  it('completes a lone job and starts the next one with no timer involved', async () => {
    vi.useFakeTimers();
    const { boss, statements, completed } = fakeBoss(['a', 'b']);
    const ran: string[] = [];
    consumer(boss, async (job) => void ran.push(job.key!), 1);
    // Fake timers never fire here: a completion or a fetch waiting on one would hang this test.
    await completed(2);
    expect(ran).toEqual(['a', 'b']);
    expect(statements).toEqual([['a'], ['b']]);
  });

  it('starts the next job while the completion of a settled one is still being written', async () => {
    const { boss, statements, state } = fakeBoss(['a', 'b']);
    const written = latch();
    state.completing = written.opened;
    const ran: string[] = [];
    let running = 0;
    let most = 0;
    consumer(
      boss,
      async (job) => {
        most = Math.max(most, ++running);
        ran.push(job.key!);
        await Promise.resolve();
        running--;
      },
      1,
    );
    await vi.waitFor(() => expect(ran).toEqual(['a', 'b']));
    expect(statements).toEqual([['a']]);
    expect(most).toBe(1);
    written.open();
    await vi.waitFor(() => expect(statements).toEqual([['a'], ['b']]));
  });

  it('fetches again at once for a slot freed while a fetch was under way, not at the next poll', async () => {
    const queued = ['a', 'x'];
    const { boss, fetches, state, statements } = fakeBoss(queued);
    const finish = new Map<string, () => void>();
    const started: string[] = [];
    consumer(
      boss,
      (job) => {
        started.push(job.key!);
        return new Promise<void>((resolve) => finish.set(job.key!, resolve));
      },
      3,
    );
    await vi.waitFor(() => expect(started).toEqual(['a', 'x']));
    const fetch = latch();
    state.fetching = fetch.opened;
    finish.get('a')!();
    // A fetch for two slots (a's and the free one) is under way; x frees a third meanwhile, and the fetch brings b, c.
    await vi.waitFor(() => expect(fetches).toEqual([3, 2]));
    finish.get('x')!();
    await vi.waitFor(() => expect(statements.flat()).toContain('x'));
    queued.push('b', 'c', 'd');
    fetch.open();
    await vi.waitFor(() => expect(started).toEqual(['a', 'x', 'b', 'c', 'd']));
  });

  it('reports each job of a failed completion statement, and frees their slots', async () => {
    const ids = Array.from({ length: 6 }, (_, i) => `j${i}`);
    const { boss, statements, state } = fakeBoss([...ids, 'next']);
    state.failure = new Error('connection lost');
    const errors: string[] = [];
    const ran: string[] = [];
    consumer(
      boss,
      async (job) => void ran.push(job.key!),
      6,
      (error) => errors.push(error.message),
    );
    await vi.waitFor(() => expect(ran).toContain('next'));
    await vi.waitFor(() => expect(errors).toHaveLength(7));
    expect(statements.flat().sort()).toEqual([...ids, 'next'].sort());
    expect(statements.length).toBeLessThan(7);
    expect([...errors].sort()).toEqual(
      [...ids, 'next'].map(
        (id) => `[@payhook/queue] could not record the outcome of job ${id}: connection lost`,
      ),
    );
  });
});
