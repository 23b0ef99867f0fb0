import { createHash } from 'node:crypto';

// What both PostgreSQL stores share: the client shapes they accept, the table (its name, migration and pruning)
// and how a statement is sent.

/** What the stores read from a query result (`pg`'s `QueryResult` fits). */
export interface PgResult {
  rows: unknown[];
  rowCount: number | null;
  command?: string;
}

/**
 * A query as `pg` takes it: with a `name`, `pg` prepares it once per connection and then sends only its values.
 *
 * @example
 * const claim: PgQueryConfig = { name: 'payhook_claim_1f2e', text: 'INSERT …', values: [key] };
 */
export interface PgQueryConfig {
  name?: string;
  text: string;
  values?: unknown[];
}

/**
 * Anything that runs a parameterised query, given as text and values or as a (named) query config: a `pg`
 * `Pool`, `Client` or `PoolClient`.
 *
 * @example
 * const db: PgQueryable = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 */
export interface PgQueryable {
  query(textOrConfig: string | PgQueryConfig, values?: unknown[]): Promise<PgResult>;
}

/** A connection checked out of a pool (`pg`'s `PoolClient`): queries, then goes back with `release`. */
export interface PgPoolClientLike extends PgQueryable {
  release(error?: Error | boolean): void;
  /**
   * `pg`'s own quoting of a string as an SQL literal (`pg.Client#escapeLiteral`). Where a client has it,
   * `PostgresInbox` sends `BEGIN` and its claim in one round trip; without it, in two.
   */
  escapeLiteral?(value: string): string;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * A pool that lends connections (`pg`'s `Pool`). The inbox needs one: each delivery runs in its own transaction
 * on its own connection.
 *
 * @example
 * const pool: PgPoolLike<pg.PoolClient> = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 */
export interface PgPoolLike<C extends PgPoolClientLike = PgPoolClientLike> extends PgQueryable {
  connect(): Promise<C>;
  // Never called: it mirrors pg.Pool's callback overload, because TypeScript infers a type argument from overloads
  // paired from the last; without it `new PostgresInbox({ pool })` would not infer C as pg.PoolClient.
  connect(callback: (error: Error | undefined, client: C | undefined) => void): void;
}

export interface PostgresTableOptions {
  /**
   * The inbox table, optionally schema-qualified (`billing.payhook_inbox`); letters, digits and `_` only.
   * @default 'payhook_inbox'
   */
  table?: string;
  /**
   * Send the store's statements as named prepared statements (parsed and planned once per connection). Turn it
   * off behind a pooler that cannot keep them (PgBouncer before 1.21 in transaction mode).
   * @default true
   */
  prepare?: boolean;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export interface Table {
  /** The quoted, possibly schema-qualified name. */
  readonly name: string;
  /** The quoted name of the expiry index (an index lives in its table's schema, so it is never qualified). */
  readonly index: string;
  /** The call that makes or updates this table, as an error message tells it. */
  readonly migrate: string;
}

export function tableOf(table = 'payhook_inbox'): Table {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new TypeError(
      `[@payhook/core] the inbox table name ${JSON.stringify(table)} is not a plain identifier (schema.table of letters, digits and _).`,
    );
  }
  const last = parts[parts.length - 1]!;
  return {
    name: parts.map((part) => `"${part}"`).join('.'),
    index: `"${last}_expires_at_idx"`,
    migrate: table === 'payhook_inbox' ? 'migrate(pool)' : `migrate(pool, { table: '${table}' })`,
  };
}

/** SQLSTATEs of a statement on a table that migrate() has not made, or not brought up to this version. */
const UNDEFINED_TABLE = '42P01';
const UNDEFINED_COLUMN = '42703';

/** The error of one of the stores' own statements, with the fix when the table is missing or out of date. */
export function explained(error: unknown, table: Table): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== UNDEFINED_TABLE && code !== UNDEFINED_COLUMN) return error;
  const what = code === UNDEFINED_TABLE ? 'does not exist' : 'was made by an earlier payhook';
  return new Error(
    `[@payhook/core] the inbox table ${table.name} ${what}: run ${table.migrate} from @payhook/core/postgres (or its migrations/payhook_inbox.sql) before the first delivery, and again after upgrading payhook.`,
    { cause: error },
  );
}

/**
 * The SQL that creates the inbox table and its expiry index; safe to run again, and it changes only what is
 * missing (each change is checked in the catalog first: DDL on the table waits for every open transaction on it).
 * The package ships it for the default table as `node_modules/@payhook/core/migrations/payhook_inbox.sql` (for
 * psql or a migration tool).
 *
 * @example
 * await pool.query(migrationSql('billing.payhook_inbox'));
 */
export function migrationSql(table?: string): string {
  const t = tableOf(table);
  return `-- The payhook inbox: one row per notification key, a lease while a copy is handled, then done until expiry.
-- The primary key keeps a claim O(log n); the expiry index keeps prune() bounded. Safe to run again:
--   psql --single-transaction -f payhook_inbox.sql   (or migrate(pool) from @payhook/core/postgres)
-- Only what is missing is changed, each change checked first: DDL on the table (ALTER TABLE, and CREATE INDEX even
-- when the index exists) waits for every open transaction on it, and every delivery queues behind that wait.
CREATE TABLE IF NOT EXISTS ${t.name} (
  key        text        PRIMARY KEY,
  done       boolean     NOT NULL DEFAULT false,
  token      text,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  fence      bigint      NOT NULL DEFAULT 0
);
-- A table made before fences gains the column (instantly: a constant default).
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute
                 WHERE attrelid = '${t.name}'::regclass AND attname = 'fence' AND NOT attisdropped) THEN
    ALTER TABLE ${t.name} ADD COLUMN fence bigint NOT NULL DEFAULT 0;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                 WHERE i.indrelid = '${t.name}'::regclass AND c.relname = '${t.index.slice(1, -1)}') THEN
    CREATE INDEX IF NOT EXISTS ${t.index} ON ${t.name} (expires_at);
  END IF;
END $$;
`;
}

/**
 * The table `migrate` makes (or brings up to date), and how long a change it needs may wait for the table.
 *
 * @example
 * await migrate(pool, { table: 'billing.payhook_inbox', lockTimeoutMs: 500, attempts: 10 });
 */
export interface MigrateOptions extends PostgresTableOptions {
  /**
   * The `lock_timeout` of a change the table needs: the longest it waits for open transactions on the table (the
   * inbox's deliveries in progress hold it) before it gives up and is tried again. Deliveries wait behind it
   * meanwhile, so keep it short. A table that needs nothing takes no lock at all.
   * @default 1_000
   */
  lockTimeoutMs?: number;
  /**
   * How many times a needed change is tried (waiting `lockTimeoutMs` between tries, so deliveries get through)
   * before `migrate` throws.
   * @default 5
   */
  attempts?: number;
}

/** SQLSTATE of a lock wait that ran past `lock_timeout`. */
export const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Creates the inbox table and its index, or adds what an earlier version lacks. Safe to run from every instance at
 * every start: it reads the catalog first and, when nothing is missing, takes no lock, so it never waits on a
 * delivery in progress. A change that is needed runs under an advisory lock (concurrent runs take turns) with a
 * short `lock_timeout`, and is tried again up to `attempts` times before it throws.
 *
 * @example
 * await migrate(pool); // or migrate(pool, { table: 'billing.payhook_inbox' })
 */
export async function migrate(client: PgQueryable, options?: MigrateOptions): Promise<void> {
  const t = tableOf(options?.table);
  await runMigration(client, options, {
    missing: () => missingParts(client, t),
    sql: migrationSql(options?.table),
    failure: (missing, ms, attempts, cause) => notMigrated(t, missing, ms, attempts, cause),
  });
}

/** One migration: what is missing (read from the catalog alone), the SQL that adds it, and the error when it cannot. */
export interface Migration {
  missing(): Promise<string[]>;
  readonly sql: string;
  failure(missing: string[], lockTimeoutMs: number, attempts: number, cause: unknown): Error;
}

/**
 * The online-migration rules every payhook table follows: nothing missing, no lock at all; else the SQL under an
 * advisory lock (concurrent runs take turns) with a short `lock_timeout`, tried `attempts` times.
 */
export async function runMigration(
  client: PgQueryable,
  options: Pick<MigrateOptions, 'lockTimeoutMs' | 'attempts'> | undefined,
  migration: Migration,
): Promise<void> {
  const lockTimeoutMs = Math.max(1, Math.ceil(options?.lockTimeoutMs ?? 1_000));
  const attempts = Math.max(1, Math.floor(options?.attempts ?? 5));
  for (let attempt = 1; ; attempt++) {
    const missing = await migration.missing();
    if (missing.length === 0) return;
    try {
      // One simple-protocol string: one connection and one implicit transaction, which the lock_timeout (local to
      // it) and the advisory xact lock cover.
      await client.query(
        `SELECT set_config('lock_timeout', '${lockTimeoutMs}', true);\nSELECT pg_advisory_xact_lock(hashtext('payhook migrate'));\n${migration.sql}`,
      );
      return;
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== LOCK_NOT_AVAILABLE) throw error;
      if (attempt >= attempts) throw migration.failure(missing, lockTimeoutMs, attempts, error);
    }
    await new Promise((resolve) => setTimeout(resolve, lockTimeoutMs));
  }
}

/** What the table lacks, read from the catalog alone (no lock on the table). */
async function missingParts(client: PgQueryable, t: Table): Promise<string[]> {
  const result = await client.query(
    `SELECT c.oid IS NOT NULL AS table,
       EXISTS (SELECT 1 FROM pg_attribute
               WHERE attrelid = c.oid AND attname = 'fence' AND NOT attisdropped) AS fence,
       EXISTS (SELECT 1 FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
               WHERE i.indrelid = c.oid AND x.relname = $2) AS index
     FROM (SELECT to_regclass($1) AS oid) AS c`,
    [t.name, t.index.slice(1, -1)],
  );
  const found = result.rows[0] as { table: boolean; fence: boolean; index: boolean };
  if (!found.table) return ['the table'];
  return [...(found.fence ? [] : ['the fence column']), ...(found.index ? [] : ['the expiry index'])];
}

function notMigrated(t: Table, missing: string[], ms: number, attempts: number, cause: unknown): Error {
  const what =
    missing[0] === 'the table'
      ? `create the inbox table ${t.name}`
      : `add ${missing.join(' and ')} to the inbox table ${t.name}`;
  return new Error(
    `[@payhook/core] migrate could not ${what}: its lock was not granted within ${ms} ms (lockTimeoutMs) in ${attempts} attempts, as open transactions hold the table (deliveries in progress, or another session's). Nothing was changed; run migrate again once they end, or raise lockTimeoutMs.`,
    { cause },
  );
}

/** A statement of the stores: named (parsed and planned once per connection) unless `prepare` is off. */
export type Statement = (values: unknown[]) => PgQueryConfig;

export function statement(text: string, prepare = true): Statement {
  if (!prepare) return (values) => ({ text, values });
  const name = nameOf(text);
  return (values) => ({ name, text, values });
}

/** Named for its text, so stores of two tables on one pool never share a name. */
export function nameOf(text: string): string {
  return `payhook_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

export function prune(pool: PgQueryable, table: Table, limit: number): Promise<number> {
  const bounded = Math.max(1, Math.floor(limit));
  // SKIP LOCKED: never wait for (or delete under) a row a live transaction is re-claiming.
  return pool
    .query(
      `DELETE FROM ${table.name} WHERE key IN (
         SELECT key FROM ${table.name} WHERE expires_at <= now() ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED
       ) AND expires_at <= now()`,
      [bounded],
    )
    .then((result) => result.rowCount ?? 0);
}

export interface PruneOptions {
  /**
   * The most rows one call deletes, so a call stays short; call again while it returns `limit`.
   * @default 1_000
   */
  limit?: number;
}
