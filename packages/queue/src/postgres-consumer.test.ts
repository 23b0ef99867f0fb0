import type PgBoss from 'pg-boss';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JobRunner } from './engine.js';
import { FETCH_DELAY_MS, PostgresConsumer } from './postgres-consumer.js';
import type { FetchedJob, PostgresJobs } from './postgres-sql.js';

function latch(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/**
 * The job table as the consumer uses it: `fetch` hands out the queued ids, pg-boss's `complete` records each
 * statement's ids and answers once `completing` opens (at once by default) or rejects with `failure`.
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
  const jobs = {
    async fetch(limit: number): Promise<FetchedJob[]> {
      fetches.push(limit);
      await state.fetching;
      const ids = queued.splice(0, limit);
      return ids.map((id) => ({
        id,
        data: { key: id, data: {}, secretIndex: 0 },
        retry_count: 0,
        retry_limit: 2,
      }));
    },
    heartbeat: async () => new Set(),
    handBack: async () => {},
  };
  const boss = {
    async complete(_name: string, ids: string | string[]) {
      statements.push(Array.isArray(ids) ? [...ids] : [ids]);
      for (const w of waiting) if (statements.flat().length >= w.count) w.open();
      await state.completing;
      if (state.failure) throw state.failure;
      return {};
    },
  };
  return {
    boss: boss as unknown as PgBoss,
    jobs: jobs as unknown as PostgresJobs,
    statements,
    fetches,
    state,
    completed,
  };
}

/** Waits, on the real event loop, until the consumer has set `count` fake timers. */
async function untilTimers(count: number): Promise<void> {
  for (let turn = 0; turn < 10_000; turn++) {
    if (vi.getTimerCount() >= count) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`fewer than ${count} timers after 10,000 turns of the event loop`);
}

const consumers: PostgresConsumer[] = [];

function consumer(
  { boss, jobs }: { boss: PgBoss; jobs: PostgresJobs },
  run: JobRunner,
  concurrency: number,
  onError = (_: Error) => {},
) {
  const setup = { boss, jobs, name: 'q', concurrency, pollingMs: 60_000, heartbeatMs: 60_000, onError };
  const created = new PostgresConsumer(setup, run);
  consumers.push(created);
  return created;
}

describe('PostgresConsumer, completing jobs', () => {
  afterEach(async () => {
    vi.useRealTimers();
    await Promise.all(consumers.splice(0).map((c) => c.stop(0)));
  });

  it('completes the jobs that settled since the last fetch in one statement, beside the next fetch', async () => {
    const ids = Array.from({ length: 8 }, (_, i) => `j${i}`);
    const { statements, fetches, ...engine } = fakeBoss([...ids]);
    const ran: string[] = [];
    consumer(engine, async (job) => void ran.push(job.key!), 8);
    await vi.waitFor(() => expect(fetches).toEqual([8, 8]));
    expect(ran).toEqual(ids);
    await vi.waitFor(() => expect(statements).toEqual([ids]));
  });

  it('fills a lone free slot behind long handlers within the fetch delay, not at the poll, with one fetch and one completion', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { statements, fetches, ...engine } = fakeBoss(['a', 'b', 'c', 'd', 'late']);
    const finish = new Map<string, () => void>();
    const started: string[] = [];
    const lateStarted = latch();
    consumer(
      engine,
      (job) => {
        started.push(job.key!);
        if (job.key === 'late') lateStarted.open();
        return new Promise<void>((resolve) => finish.set(job.key!, resolve));
      },
      4,
    );
    await untilTimers(2); // the heartbeat and the poll: the consumer waits with its four slots busy
    expect([started, fetches]).toEqual([['a', 'b', 'c', 'd'], [4]]);
    finish.get('a')!();
    finish.get('b')!();
    await untilTimers(3); // the fetch delay, armed by the first slot freed
    await vi.advanceTimersByTimeAsync(FETCH_DELAY_MS - 1);
    expect([fetches, statements]).toEqual([[4], []]);
    await vi.advanceTimersByTimeAsync(1);
    await lateStarted.opened;
    // One fetch for both free slots (the queue had one job left), and the two completions together beside it.
    expect([fetches, statements]).toEqual([[4, 2], [['a', 'b']]]);
  });

  it('completes a lone job and starts the next one with no timer involved', async () => {
    vi.useFakeTimers();
    const { statements, completed, ...engine } = fakeBoss(['a', 'b']);
    const ran: string[] = [];
    consumer(engine, async (job) => void ran.push(job.key!), 1);
    // Fake timers never fire here: a completion or a fetch waiting on one would hang this test.
    await completed(2);
    expect(ran).toEqual(['a', 'b']);
    expect(statements).toEqual([['a'], ['b']]);
  });

  it('starts the next job while the completion of a settled one is still being written', async () => {
    const { statements, state, ...engine } = fakeBoss(['a', 'b']);
    const written = latch();
    state.completing = written.opened;
    const ran: string[] = [];
    let running = 0;
    let most = 0;
    consumer(
      engine,
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

  it('fetches for a slot freed while a fetch was under way within the fetch delay, not at the next poll', async () => {
    const queued = ['a', 'x'];
    const { fetches, state, statements, ...engine } = fakeBoss(queued);
    const finish = new Map<string, () => void>();
    const started: string[] = [];
    consumer(
      engine,
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
    const { statements, state, ...engine } = fakeBoss([...ids, 'next']);
    state.failure = new Error('connection lost');
    const errors: string[] = [];
    const ran: string[] = [];
    consumer(
      engine,
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

describe('PostgresConsumer, a job its heartbeat finds expired', () => {
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.stop(0)));
  });

  it("aborts that job's signal alone, made when read, and reports it", async () => {
    const { jobs, boss } = fakeBoss(['a', 'b']);
    // Stall detection expired `a`; `b` is still this worker's.
    Object.assign(jobs, { heartbeat: async () => new Set(['b']) });
    const signals = new Map<string, AbortSignal>();
    const errors: string[] = [];
    const running = new PostgresConsumer(
      {
        boss,
        jobs,
        name: 'q',
        concurrency: 2,
        pollingMs: 60_000,
        heartbeatMs: 10,
        onError: (e) => void errors.push(e.message),
      },
      (job, attempt) => {
        signals.set(job.key!, attempt.signal);
        return new Promise<void>((resolve) => attempt.signal.addEventListener('abort', () => resolve()));
      },
    );
    consumers.push(running);
    await vi.waitFor(() => expect(signals.get('a')?.aborted).toBe(true));
    expect(String(signals.get('a')!.reason)).toContain('job a was handed back');
    expect(signals.get('b')!.aborted).toBe(false);
    expect(errors).toEqual(['[@payhook/queue] job a expired while running here.']);
  });
});
