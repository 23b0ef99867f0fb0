import type { PgQueryable } from '@payhook/core/postgres';
import type { DeadFilter, DeadSelection, WaitingFilter, WaitingSelection } from './engine.js';
import { type DeadRow, type JobError, jobIdsOf, type WaitingRow } from './postgres-job.js';

// The statements pg-boss 10 has no call for, on its own job table (`<schema>.job`, partitioned by queue name).
// Each is one statement guarded by the row's state, so two CLIs or workers racing on one job cannot both win:
// PostgreSQL locks the row, and the loser re-reads a state that no longer matches.

/** A job as `fetch` takes it: running here from now on, `retry_count` its attempts before this one. */
export interface FetchedJob {
  id: string;
  data: unknown;
  retry_count: number;
  retry_limit: number;
}

/**
 * A dead job is pg-boss's `failed` state: it stays in the job table (the queue keeps it there for its dead
 * retention) until replayed, discarded or archived.
 */
export class PostgresJobs {
  readonly #db: PgQueryable;
  readonly #table: string;
  readonly #name: string;
  readonly #schema: string;

  constructor(db: PgQueryable, schema: string, name: string) {
    this.#db = db;
    this.#schema = schema;
    this.#table = `${schema}.job`;
    this.#name = name;
  }

  /**
   * pg-boss's `createQueue`, serialised: two processes creating one queue at once deadlock inside pg-boss 10's
   * `create_queue` (each holds what the other's partition attach needs). The lock lasts this one statement.
   */
  async createQueue(): Promise<void> {
    await this.#db.query(
      `WITH locked AS (SELECT pg_advisory_xact_lock(hashtextextended($3, 0)))
       SELECT ${this.#schema}.create_queue($1, $2::json) FROM locked`,
      [this.#name, JSON.stringify({ policy: 'standard' }), `payhook.queue.create.${this.#schema}`],
    );
  }

  async dead(filter: DeadFilter = {}): Promise<DeadRow[]> {
    const { rows } = await this.#query(
      `SELECT id, data, output, retry_count, created_on, completed_on FROM ${this.#table}
       WHERE name = $1 AND state = 'failed' AND ($2::timestamptz IS NULL OR completed_on >= $2)
       ORDER BY completed_on, id LIMIT $3`,
      [this.#name, filter.since ?? null, filter.limit ?? 100],
    );
    return rows as DeadRow[];
  }

  /**
   * Queues dead jobs again as new: no attempt made, no error, the same queued time, and as long to wait in the
   * queue as when they were first queued (pg-boss archives a job still waiting at `keep_until`).
   */
  async replay(selection: DeadSelection): Promise<number> {
    const [where, values] = this.#selected(selection);
    const { rows } = await this.#query(
      `UPDATE ${this.#table} SET state = 'created', retry_count = 0, started_on = NULL, completed_on = NULL,
         output = NULL, start_after = now(), keep_until = now() + (keep_until - created_on)
       WHERE ${where} RETURNING id`,
      values,
    );
    return rows.length;
  }

  async discard(selection: DeadSelection): Promise<number> {
    const [where, values] = this.#selected(selection);
    const { rows } = await this.#query(`DELETE FROM ${this.#table} WHERE ${where} RETURNING id`, values);
    return rows.length;
  }

  /** Jobs queued and not running (`created`, or `retry`: waiting for their next attempt), oldest queued first. */
  async waiting(filter: WaitingFilter = {}): Promise<WaitingRow[]> {
    const { rows } = await this.#query(
      `SELECT id, data, retry_count, created_on, started_on FROM ${this.#table}
       WHERE name = $1 AND state IN ('created', 'retry') AND ($2::timestamptz IS NULL OR created_on >= $2)
       ORDER BY created_on, id LIMIT $3`,
      [this.#name, filter.since ?? null, filter.limit ?? 100],
    );
    return rows as WaitingRow[];
  }

  /** Deletes waiting jobs, guarded by their state: one a worker took meanwhile is left to run. */
  async purge(selection: WaitingSelection): Promise<number> {
    const waiting = `name = $1 AND state IN ('created', 'retry')`;
    const [where, values]: [string, unknown[]] =
      'ids' in selection
        ? [`${waiting} AND id = ANY($2::uuid[])`, [this.#name, jobIdsOf(selection.ids)]]
        : [
            `${waiting} AND ($2::timestamptz IS NULL OR created_on >= $2)`,
            [this.#name, selection.since ?? null],
          ];
    const { rows } = await this.#query(`DELETE FROM ${this.#table} WHERE ${where} RETURNING id`, values);
    return rows.length;
  }

  /**
   * Takes up to `limit` jobs, oldest first: pg-boss 10's fetch (`fetchNextJob` in its `plans.js`) for a queue of the
   * standard policy, as `createQueue` makes it, returning only the columns a run needs. pg-boss's own returns every
   * column, six timestamps and an interval parsed each: a fifth of the consumer's `pg` time. A failure rejects,
   * where pg-boss's `fetch` answers no job.
   */
  async fetch(limit: number): Promise<FetchedJob[]> {
    const { rows } = await this.#db.query(
      `WITH next AS (
         SELECT id FROM ${this.#table}
         WHERE name = $1 AND state < 'active' AND start_after < now()
         ORDER BY priority DESC, created_on, id LIMIT $2 FOR UPDATE SKIP LOCKED
       ), taken AS (
         UPDATE ${this.#table} j SET state = 'active', started_on = now(),
           retry_count = CASE WHEN started_on IS NOT NULL THEN retry_count + 1 ELSE retry_count END
         FROM next WHERE j.name = $1 AND j.id = next.id
         RETURNING j.id, j.data, j.retry_count, j.retry_limit, j.priority, j.created_on
       )
       SELECT id, data, retry_count, retry_limit FROM taken ORDER BY priority DESC, created_on, id`,
      [this.#name, limit],
    );
    return rows as FetchedJob[];
  }

  /**
   * Keeps running jobs from expiring: pg-boss fails an active job whose `started_on + expire_in` has passed (its
   * stall detection), so a live worker moves `started_on` forward and a killed one stops doing so. Returns the ids
   * still active; a missing one was expired (a heartbeat came too late) and may already run elsewhere.
   */
  async heartbeat(ids: readonly string[]): Promise<Set<string>> {
    const { rows } = await this.#db.query(
      `UPDATE ${this.#table} SET started_on = now()
       WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'active' RETURNING id`,
      [this.#name, ids],
    );
    return new Set((rows as { id: string }[]).map((row) => row.id));
  }

  /**
   * Hands running jobs back to the queue at once, without spending an attempt: the next fetch counts the attempt
   * again (pg-boss adds one to `retry_count` when `started_on` is set, so this takes one off, or clears it).
   */
  async handBack(ids: readonly string[]): Promise<void> {
    await this.#db.query(
      `UPDATE ${this.#table} SET state = 'retry', start_after = now(),
         retry_count = GREATEST(retry_count - 1, 0),
         started_on = CASE WHEN retry_count = 0 THEN NULL ELSE started_on END
       WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'active'`,
      [this.#name, ids],
    );
  }

  /**
   * Fails a running job for good, whatever attempts it has left: pg-boss's `fail` would retry it. One statement
   * guarded by `active`: a job stall detection expired meanwhile is left to its retry, which refuses it again.
   */
  async bury(id: string, output: JobError): Promise<void> {
    await this.#db.query(
      `UPDATE ${this.#table} SET state = 'failed', completed_on = now(), output = $3::jsonb
       WHERE name = $1 AND id = $2::uuid AND state = 'active'`,
      [this.#name, id, JSON.stringify(output)],
    );
  }

  /** A query on the job table, which has no rows yet when pg-boss never started on this schema. */
  async #query(text: string, values: unknown[]): Promise<{ rows: unknown[] }> {
    try {
      return await this.#db.query(text, values);
    } catch (error) {
      if ((error as { code?: unknown }).code === '42P01') return { rows: [] }; // undefined_table
      throw error;
    }
  }

  #selected(selection: DeadSelection): [string, unknown[]] {
    const dead = `name = $1 AND state = 'failed'`;
    if ('ids' in selection)
      return [`${dead} AND id = ANY($2::uuid[])`, [this.#name, jobIdsOf(selection.ids)]];
    return [
      `${dead} AND ($2::timestamptz IS NULL OR completed_on >= $2)`,
      [this.#name, selection.since ?? null],
    ];
  }
}
