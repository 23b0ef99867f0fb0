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
 * The SQL that creates the inbox table and its expiry index; safe to run again. The package ships it for the
 * default table as `node_modules/@payhook/core/migrations/payhook_inbox.sql` (for psql or a migration tool).
 *
 * @example
 * await pool.query(migrationSql('billing.payhook_inbox'));
 */
export function migrationSql(table?: string): string {
  const t = tableOf(table);
  return `-- The payhook inbox: one row per notification key, a lease while a copy is handled, then done until expiry.
-- The primary key keeps a claim O(log n); the expiry index keeps prune() bounded. Safe to run again:
--   psql --single-transaction -f payhook_inbox.sql   (or migrate(pool) from @payhook/core/postgres)
CREATE TABLE IF NOT EXISTS ${t.name} (
  key        text        PRIMARY KEY,
  done       boolean     NOT NULL DEFAULT false,
  token      text,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  fence      bigint      NOT NULL DEFAULT 0
);
-- A table made before fences gains the column (instantly: a constant default). Checked first, because ALTER TABLE
-- locks the whole table even when the column exists.
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute
                 WHERE attrelid = '${t.name}'::regclass AND attname = 'fence' AND NOT attisdropped) THEN
    ALTER TABLE ${t.name} ADD COLUMN fence bigint NOT NULL DEFAULT 0;
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS ${t.index} ON ${t.name} (expires_at);
`;
}

/**
 * Creates the inbox table and its index when missing. Safe to run from every instance at start-up: an advisory
 * lock serialises concurrent runs, and the statements run as one implicit transaction.
 *
 * @example
 * await migrate(pool); // or migrate(pool, { table: 'billing.payhook_inbox' })
 */
export async function migrate(client: PgQueryable, options?: PostgresTableOptions): Promise<void> {
  const sql = migrationSql(options?.table);
  // One simple-protocol query string: one connection, one implicit transaction, so the xact lock covers it.
  await client.query(`SELECT pg_advisory_xact_lock(hashtext('payhook migrate'));\n${sql}`);
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
