import { Batcher } from '@payhook/core/adapter';
import type { PgQueryable } from '@payhook/core/postgres';

/** A job to insert: its id (the notification key's, or a random one) and its data. */
export interface NewJob {
  readonly id: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** The per-job settings every job of one queue is inserted with, in pg-boss's units. */
export interface JobSettings {
  readonly retryLimit: number;
  readonly retryDelay: number;
  readonly retryBackoff: boolean;
  readonly expireInSeconds: number;
}

/** At most this many jobs go in one INSERT; more wait for the next. */
const MAX_BATCH = 256;
/** INSERTs under way at once; the enqueues made meanwhile wait for a free one and then go together. */
const LANES = 4;

/**
 * Inserts jobs the way pg-boss 10's `send` does (its `insertJob`: the queue's dead letter, policy and retention,
 * `ON CONFLICT DO NOTHING` on the id), but the enqueues that arrive while an INSERT is under way go together in the
 * next one: a burst of webhooks costs a few commits (and WAL flushes) instead of one each. A lone enqueue goes out
 * at once (no timer). Resolves whether this call's job was inserted (`false`: a job with its id exists).
 */
export class JobInserter {
  readonly #db: PgQueryable;
  readonly #sql: string;
  readonly #name: string;
  readonly #settings: JobSettings;
  readonly #batcher: Batcher<NewJob, boolean | Failed>;

  constructor(db: PgQueryable, schema: string, name: string, settings: JobSettings) {
    this.#db = db;
    this.#settings = settings;
    this.#sql = insertJobs(schema);
    this.#name = name;
    this.#batcher = new Batcher((jobs) => this.#insert(jobs), { lanes: LANES, max: MAX_BATCH });
  }

  async insert(job: NewJob): Promise<boolean> {
    const inserted = await this.#batcher.call(job);
    if (inserted instanceof Failed) throw inserted.error;
    return inserted;
  }

  /**
   * One INSERT for the batch. When it fails, each job is tried alone: a job PostgreSQL refuses (data `jsonb` cannot
   * hold, such as `\u0000`) fails only its own enqueue, as it did unbatched, not the webhooks it went with.
   */
  async #insert(jobs: readonly NewJob[]): Promise<(boolean | Failed)[]> {
    try {
      return await this.#insertAll(jobs);
    } catch (error) {
      if (jobs.length === 1) return [new Failed(error)];
      return Promise.all(
        jobs.map((job) =>
          this.#insertAll([job]).then(
            ([inserted]) => inserted!,
            (e) => new Failed(e),
          ),
        ),
      );
    }
  }

  async #insertAll(jobs: readonly NewJob[]): Promise<boolean[]> {
    // Of several enqueues of one id in a batch, the first is the one inserted, if any: only it goes in the INSERT.
    const first = new Map<string, NewJob>();
    for (const job of jobs) if (!first.has(job.id)) first.set(job.id, job);
    const s = this.#settings;
    const { rows } = await this.#db.query(this.#sql, [
      JSON.stringify([...first.values()]),
      s.expireInSeconds,
      s.retryLimit,
      s.retryDelay,
      s.retryBackoff,
      this.#name,
    ]);
    const inserted = new Set((rows as { id: string }[]).map((row) => row.id));
    return jobs.map((job) => first.get(job.id) === job && inserted.has(job.id));
  }
}

/** What a job's own INSERT threw. */
class Failed {
  constructor(readonly error: unknown) {}
}

/** pg-boss 10's `insertJob` for many jobs of one queue, with payhook's settings and no singleton, priority or delay. */
function insertJobs(schema: string): string {
  return `INSERT INTO ${schema}.job (id, name, data, priority, start_after, singleton_key, singleton_on,
      dead_letter, expire_in, keep_until, retry_limit, retry_delay, retry_backoff, policy)
    SELECT j.id, q.name, j.data, 0, now(), NULL, NULL, q.dead_letter, $2::numeric * interval '1s',
      now() + CAST(COALESCE((q.retention_minutes * 60)::text, '14 days') AS interval),
      $3::int, CASE WHEN $5::bool THEN GREATEST($4::int, 1) ELSE $4::int END, $5::bool, q.policy
    FROM json_to_recordset($1::json) AS j (id uuid, data jsonb)
    JOIN ${schema}.queue q ON q.name = $6
    ON CONFLICT DO NOTHING
    RETURNING id`;
}
