import type { PgQueryable } from '@payhook/core/postgres';

/**
 * Options of {@link createPostgresQueue}. Give `connectionString` (the engine opens and closes its own pool) or
 * `pool` (yours: the engine never ends it).
 *
 * @example
 * const options: PostgresQueueOptions = { connectionString: process.env.DATABASE_URL, attempts: 5 };
 */
export interface PostgresQueueOptions {
  /** A PostgreSQL URL; the engine opens a `pg` pool of `max` connections on it and closes it in `close()`. */
  connectionString?: string;
  /** An existing `pg` `Pool`, shared with the app; `close()` leaves it open. */
  pool?: PgQueryable;
  /** Connections of the pool the engine opens from `connectionString`. @default 10 */
  max?: number;
  /** The queue's name: web processes and workers of one app use the same. @default 'payhook-notifications' */
  name?: string;
  /**
   * The schema pg-boss creates its tables in (letters, digits, `_`). Not pg-boss's own `pgboss`, so an app that
   * already runs another pg-boss version there is never migrated by this one.
   * @default 'payhook_queue'
   */
  schema?: string;
  /** Runs of a job before it is dead: the first one and the retries. @default 10 */
  attempts?: number;
  /**
   * The wait before a retry, in milliseconds (pg-boss counts whole seconds: rounded up). `exponential`: after
   * attempt n, between `delay·2^(n-1)` and `delay·2^n` (pg-boss adds jitter), so from 2 s up to about 17 min
   * after the 9th; `fixed`: `delay` every time.
   * @default { type: 'exponential', delay: 2000 }
   */
  backoff?: { type: 'exponential' | 'fixed'; delay: number };
  /**
   * Stall detection: a running job whose worker has not sent a heartbeat (every third of this) for this long is
   * expired by pg-boss's maintenance and retried elsewhere, so a killed worker's job moves on within
   * `stallSeconds + maintenanceIntervalSeconds`. A job may run longer than this while its worker lives.
   * @default 60
   */
  stallSeconds?: number;
  /** How often pg-boss's maintenance (expiry, archiving) runs, shared by every process on the schema. @default 30 */
  maintenanceIntervalSeconds?: number;
  /** How often an idle consumer asks for jobs (at least 0.5). @default 1 */
  pollingIntervalSeconds?: number;
  /**
   * How long a completed job stays in the job table, where its id answers a copy of its notification
   * `duplicate`: the same as core's `ttlMs` by default. After it, the store still answers the copy.
   * @default 604800 (7 days)
   */
  completedRetentionSeconds?: number;
  /** How long a dead job stays listable and replayable (then pg-boss archives it). @default 2592000 (30 days) */
  deadRetentionSeconds?: number;
  /**
   * Errors that no call returns: the pool's idle connections, pg-boss's maintenance, a heartbeat or an
   * acknowledgement that failed (the job then comes back through stall detection).
   * @default writes one line to standard error
   */
  onError?: (error: Error) => void;
}

export interface ResolvedOptions {
  name: string;
  schema: string;
  attempts: number;
  retryDelay: number;
  retryBackoff: boolean;
  stallSeconds: number;
  maintenanceIntervalSeconds: number;
  pollingIntervalSeconds: number;
  completedRetentionSeconds: number;
  deadRetentionSeconds: number;
  onError: (error: Error) => void;
}

function fail(message: string): never {
  throw new TypeError(`[@payhook/queue] ${message}`);
}

function atLeast(name: string, value: number | undefined, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < min)
    fail(`${name} must be a number of at least ${min}, not ${value}.`);
  return value;
}

function integer(
  name: string,
  value: number | undefined,
  min: number,
  max: number,
  fallback: number,
): number {
  const n = atLeast(name, value, min, fallback);
  if (!Number.isInteger(n) || n > max) fail(`${name} must be an integer from ${min} to ${max}, not ${n}.`);
  return n;
}

const DAY = 24 * 60 * 60;

export function resolveOptions(options: PostgresQueueOptions): ResolvedOptions {
  if ((options.connectionString === undefined) === (options.pool === undefined)) {
    fail('give createPostgresQueue either connectionString or pool.');
  }
  const schema = options.schema ?? 'payhook_queue';
  if (!/^[a-z_][a-z0-9_]{0,49}$/.test(schema)) {
    fail(`the schema ${JSON.stringify(schema)} is not a lower-case identifier (letters, digits and _).`);
  }
  const name = options.name ?? 'payhook-notifications';
  if (!/^[\w.\-/]+$/.test(name))
    fail(`the queue name ${JSON.stringify(name)} has characters pg-boss refuses.`);
  const backoff = options.backoff ?? { type: 'exponential', delay: 2_000 };
  const delay = Math.ceil(atLeast('backoff.delay', backoff.delay, 0, 2_000) / 1000);
  return {
    name,
    schema,
    attempts: integer('attempts', options.attempts, 1, 1_000, 10),
    // pg-boss's exponential backoff needs a delay of at least 1 s (it would raise 0 to 1 itself).
    retryDelay: backoff.type === 'exponential' ? Math.max(delay, 1) : delay,
    retryBackoff: backoff.type === 'exponential',
    // pg-boss refuses an expiry of 24 hours or more.
    stallSeconds: integer('stallSeconds', options.stallSeconds, 1, DAY - 1, 60),
    maintenanceIntervalSeconds: integer(
      'maintenanceIntervalSeconds',
      options.maintenanceIntervalSeconds,
      1,
      DAY - 1,
      30,
    ),
    pollingIntervalSeconds: atLeast('pollingIntervalSeconds', options.pollingIntervalSeconds, 0.5, 1),
    completedRetentionSeconds: integer(
      'completedRetentionSeconds',
      options.completedRetentionSeconds,
      1,
      3650 * DAY,
      7 * DAY,
    ),
    deadRetentionSeconds: integer(
      'deadRetentionSeconds',
      options.deadRetentionSeconds,
      1,
      3650 * DAY,
      30 * DAY,
    ),
    onError: options.onError ?? ((error) => console.error(`[@payhook/queue] ${error.message}`)),
  };
}
