import type { PgQueryable } from '@payhook/core/postgres';
import { integerOption, type QueueEngineOptions, resolveQueueOptions, secondsOf } from './options.js';

/**
 * Options of {@link createPostgresQueue}: the shared ones (`name`, `attempts`, `backoff`, `keepCompletedMs`,
 * `keepDeadMs`, as every engine names them), the database, and pg-boss's stall detection and polling. Give
 * `connectionString` (the engine opens and closes its own pool) or `pool` (yours: the engine never ends it). Times
 * are in milliseconds; pg-boss counts whole seconds, so they are rounded up.
 *
 * @example
 * const options: PostgresQueueOptions = { connectionString: process.env.DATABASE_URL, attempts: 5 };
 */
export interface PostgresQueueOptions extends QueueEngineOptions {
  /** A PostgreSQL URL; the engine opens a `pg` pool of `max` connections on it and closes it in `close()`. */
  connectionString?: string;
  /** An existing `pg` `Pool`, shared with the app; `close()` leaves it open. */
  pool?: PgQueryable;
  /** Connections of the pool the engine opens from `connectionString`. @default 10 */
  max?: number;
  /**
   * The schema pg-boss creates its tables in (letters, digits, `_`). Not pg-boss's own `pgboss`, so an app that
   * already runs another pg-boss version there is never migrated by this one.
   * @default 'payhook_queue'
   */
  schema?: string;
  /**
   * Stall detection: a running job whose worker has not sent a heartbeat (every third of this) for this long is
   * expired by pg-boss's maintenance and retried elsewhere, so a killed worker's job moves on within
   * `stallMs + maintenanceIntervalMs`. A job may run longer than this while its worker lives. Under 24 hours.
   * @default 60_000
   */
  stallMs?: number;
  /** How often pg-boss's maintenance (expiry, archiving) runs, shared by every process on the schema. @default 30_000 */
  maintenanceIntervalMs?: number;
  /** How often an idle consumer asks for jobs (at least 500). @default 1_000 */
  pollingIntervalMs?: number;
  /**
   * Errors that no call returns: the pool's idle connections, pg-boss's maintenance, a heartbeat or an
   * acknowledgement that failed (the job then comes back through stall detection), and a consumer's fetches
   * failing (PostgreSQL down or unreachable): reported once when they start failing, not at each poll, and
   * nothing when a fetch succeeds again; the next failure after that is a new outage, reported once again.
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
  pollingIntervalMs: number;
  completedRetentionSeconds: number;
  deadRetentionSeconds: number;
  onError: (error: Error) => void;
}

function fail(message: string): never {
  throw new TypeError(`[@payhook/queue] ${message}`);
}

/** The longest pg-boss lets a job run before expiry: under 24 hours. */
const MAX_STALL_MS = 86_399_000;

/** The options in pg-boss's units: whole seconds, rounded up. */
export function resolveOptions(options: PostgresQueueOptions): ResolvedOptions {
  if ((options.connectionString === undefined) === (options.pool === undefined)) {
    fail('give createPostgresQueue either connectionString or pool.');
  }
  const schema = options.schema ?? 'payhook_queue';
  if (!/^[a-z_][a-z0-9_]{0,49}$/.test(schema)) {
    fail(`the schema ${JSON.stringify(schema)} is not a lower-case identifier (letters, digits and _).`);
  }
  const shared = resolveQueueOptions(options);
  const exponential = shared.backoff.type === 'exponential';
  const delay = secondsOf(shared.backoff.delayMs);
  return {
    name: shared.name,
    schema,
    attempts: shared.attempts,
    // pg-boss's exponential backoff needs a delay of at least 1 s (it would raise 0 to 1 itself).
    retryDelay: exponential ? Math.max(delay, 1) : delay,
    retryBackoff: exponential,
    stallSeconds: secondsOf(integerOption('stallMs', options.stallMs, 60_000, 1, MAX_STALL_MS)),
    maintenanceIntervalSeconds: secondsOf(
      integerOption('maintenanceIntervalMs', options.maintenanceIntervalMs, 30_000, 1, MAX_STALL_MS),
    ),
    pollingIntervalMs: integerOption('pollingIntervalMs', options.pollingIntervalMs, 1_000, 500),
    completedRetentionSeconds: secondsOf(shared.keepCompletedMs),
    deadRetentionSeconds: secondsOf(shared.keepDeadMs),
    onError: options.onError ?? ((error) => console.error(`[@payhook/queue] ${error.message}`)),
  };
}
