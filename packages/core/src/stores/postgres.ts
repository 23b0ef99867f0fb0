import { randomBytes } from 'node:crypto';
import type { ClaimResult, DedupeStore, TransactionalStore, TransactionResult } from '../dedupe.js';

/** What the stores read from a query result (`pg`'s `QueryResult` fits). */
export interface PgResult {
  rows: unknown[];
  rowCount: number | null;
  command?: string;
}

/**
 * Anything that runs a parameterised query: a `pg` `Pool`, `Client` or `PoolClient`.
 *
 * @example
 * const db: PgQueryable = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<PgResult>;
}

/** A connection checked out of a pool (`pg`'s `PoolClient`): queries, then goes back with `release`. */
export interface PgPoolClientLike extends PgQueryable {
  release(error?: Error | boolean): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
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
}

export interface PostgresTableOptions {
  /**
   * The inbox table, optionally schema-qualified (`billing.payhook_inbox`); letters, digits and `_` only.
   * @default 'payhook_inbox'
   */
  table?: string;
}

export interface PostgresStoreOptions extends PostgresTableOptions {
  /** A `pg` `Pool` (or one connected `Client`), shared with the rest of the app. */
  pool: PgQueryable;
}

export interface PostgresInboxOptions<C extends PgPoolClientLike> extends PostgresTableOptions {
  /** A `pg` `Pool`; each delivery borrows one connection for its transaction. */
  pool: PgPoolLike<C>;
  /**
   * How long a handled notification is remembered as done.
   * @default 604_800_000 (7 days)
   */
  ttlMs?: number;
}

/** Borrowed clients already given an error listener (pooled clients come back; add it once each). */
const guarded = new WeakSet<object>();

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
/** SQLSTATE of a lock wait that ran past `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';
const DUPLICATE: ClaimResult = { status: 'duplicate' };
const IN_FLIGHT: ClaimResult = { status: 'in_flight' };

interface Table {
  /** The quoted, possibly schema-qualified name. */
  readonly name: string;
  /** The quoted name of the expiry index (an index lives in its table's schema, so it is never qualified). */
  readonly index: string;
}

function tableOf(table = 'payhook_inbox'): Table {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    throw new TypeError(
      `[@payhook/core] the inbox table name ${JSON.stringify(table)} is not a plain identifier (schema.table of letters, digits and _).`,
    );
  }
  const last = parts[parts.length - 1]!;
  return { name: parts.map((part) => `"${part}"`).join('.'), index: `"${last}_expires_at_idx"` };
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
  created_at timestamptz NOT NULL DEFAULT now()
);
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

function prune(pool: PgQueryable, table: Table, limit: number): Promise<number> {
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

/**
 * Duplicate detection shared by every instance through PostgreSQL, with leases as in `RedisStore`: `claim` is
 * one `INSERT … ON CONFLICT DO UPDATE … WHERE expired` (an expired lease or done row is taken over), plus a
 * `SELECT` only when the key is live; `commit` upserts the done row for the TTL; `release` deletes the row only
 * while it holds the caller's token. Times come from the database clock, so instances need not agree on time.
 *
 * @example
 * import pg from 'pg';
 * import { migrate, PostgresStore } from '@payhook/core/postgres';
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * await migrate(pool);
 * createWebhookHandler({ secret, store: new PostgresStore({ pool }) });
 */
export class PostgresStore implements DedupeStore {
  readonly name = 'postgres';
  readonly #pool: PgQueryable;
  readonly #table: Table;
  readonly #claim: string;
  readonly #state: string;
  readonly #commit: string;
  readonly #renew: string;
  readonly #release: string;

  constructor(options: PostgresStoreOptions) {
    if (typeof options.pool?.query !== 'function') {
      throw new TypeError('[@payhook/core] PostgresStore needs a pg Pool or Client: pass { pool }.');
    }
    this.#pool = options.pool;
    const t = tableOf(options.table);
    this.#table = t;
    this.#claim = `INSERT INTO ${t.name} AS i (key, done, token, expires_at)
      VALUES ($1, false, $2, now() + $3 * interval '1 millisecond')
      ON CONFLICT (key) DO UPDATE SET done = false, token = excluded.token, expires_at = excluded.expires_at
      WHERE i.expires_at <= now()
      RETURNING 1`;
    this.#state = `SELECT done FROM ${t.name} WHERE key = $1 AND expires_at > now()`;
    this.#commit = `INSERT INTO ${t.name} AS i (key, done, token, expires_at)
      VALUES ($1, true, NULL, now() + $2 * interval '1 millisecond')
      ON CONFLICT (key) DO UPDATE SET done = true, token = NULL, expires_at = excluded.expires_at`;
    this.#renew = `UPDATE ${t.name} SET expires_at = now() + $3 * interval '1 millisecond'
      WHERE key = $1 AND token = $2 AND NOT done`;
    this.#release = `DELETE FROM ${t.name} WHERE key = $1 AND token = $2 AND NOT done`;
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const token = randomBytes(16).toString('hex');
    // A row deleted or expired between the INSERT and the SELECT is claimable again: try once more.
    for (let attempt = 0; attempt < 2; attempt++) {
      const claimed = await this.#pool.query(this.#claim, [key, token, Math.ceil(leaseMs)]);
      if (claimed.rowCount === 1) return { status: 'claimed', token };
      const state = await this.#pool.query(this.#state, [key]);
      const row = state.rows[0] as { done: boolean } | undefined;
      if (row) return row.done ? DUPLICATE : IN_FLIGHT;
    }
    return IN_FLIGHT;
  }

  async commit(key: string, _token: string, ttlMs: number): Promise<void> {
    await this.#pool.query(this.#commit, [key, Math.ceil(ttlMs)]);
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const renewed = await this.#pool.query(this.#renew, [key, token, Math.ceil(leaseMs)]);
    return renewed.rowCount === 1;
  }

  async release(key: string, token: string): Promise<void> {
    await this.#pool.query(this.#release, [key, token]);
  }

  /**
   * Deletes up to `limit` expired rows (oldest first) and resolves how many it deleted. Expired rows are
   * already ignored on read; this only reclaims space. Run it from a timer or a cron job.
   *
   * @example
   * setInterval(() => store.prune({ limit: 1_000 }).catch(console.error), 60_000).unref();
   */
  prune(options?: PruneOptions): Promise<number> {
    return prune(this.#pool, this.#table, options?.limit ?? 1_000);
  }
}

/**
 * A transactional inbox: each delivery runs in one transaction that inserts the notification's row and holds
 * the application's own writes (the handler receives the transaction's client: `inbox.client(delivery)`). Both
 * commit together or not at all, so the effect happens exactly once even if the process dies mid-way (the
 * database rolls the open transaction back). A concurrent copy waits on the row (up to the handler's storeTimeoutMs), then answers duplicate, or 409 while the first still runs; a
 * handler failure rolls back the row with the application's writes, so the redelivery is handled.
 *
 * @example
 * const inbox = new PostgresInbox({ pool });
 * createWebhookHandler({ secret, store: inbox }).on('purchase.success', async (payment, _ctx, delivery) => {
 *   await inbox.client(delivery).query('UPDATE orders SET paid = true WHERE id = $1', [payment.order_id]);
 * });
 */
export class PostgresInbox<C extends PgPoolClientLike = PgPoolClientLike> implements TransactionalStore<C> {
  readonly name = 'postgres';
  readonly #pool: PgPoolLike<C>;
  readonly #table: Table;
  readonly #ttlMs: number;
  readonly #claim: string;

  constructor(options: PostgresInboxOptions<C>) {
    if (typeof options.pool?.connect !== 'function') {
      throw new TypeError('[@payhook/core] PostgresInbox needs a pg Pool: pass { pool: new pg.Pool(...) }.');
    }
    this.#pool = options.pool;
    this.#ttlMs = options.ttlMs ?? 7 * 24 * 60 * 60 * 1000;
    const t = tableOf(options.table);
    this.#table = t;
    this.#claim = `INSERT INTO ${t.name} AS i (key, done, token, expires_at)
      VALUES ($1, true, NULL, now() + $2 * interval '1 millisecond')
      ON CONFLICT (key) DO UPDATE SET done = true, token = NULL, expires_at = excluded.expires_at
      WHERE i.expires_at <= now()
      RETURNING 1`;
  }

  async transaction<T>(
    key: string,
    work: (tx: C) => Promise<T>,
    options?: { readonly lockTimeoutMs?: number },
  ): Promise<TransactionResult<T>> {
    const client = await this.#pool.connect();
    if (typeof client?.release !== 'function') {
      throw new TypeError(
        '[@payhook/core] PostgresInbox needs a pg Pool (its connect() lends a client); a single Client cannot run concurrent transactions.',
      );
    }
    if (!guarded.has(client) && typeof client.on === 'function') {
      // A connection that dies while lent out emits 'error'; unheard, that would crash the app. The query in
      // flight rejects with the same error, which is what the handler reports (503).
      client.on('error', () => {});
      guarded.add(client);
    }
    let broken: Error | undefined;
    try {
      const lockTimeoutMs = options?.lockTimeoutMs;
      // A copy waits on the row a running copy's transaction holds only this long, and gives its connection back.
      await client.query(
        lockTimeoutMs === undefined
          ? 'BEGIN'
          : `BEGIN; SET LOCAL lock_timeout = ${Math.max(1, Math.ceil(lockTimeoutMs))}`,
      );
      let claimed: PgResult;
      try {
        claimed = await client.query(this.#claim, [key, this.#ttlMs]);
      } catch (error) {
        if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw error;
        await client.query('ROLLBACK');
        return { status: 'in_flight' };
      }
      // The application's own queries keep the database's lock_timeout.
      if (lockTimeoutMs !== undefined) await client.query('SET LOCAL lock_timeout TO DEFAULT');
      if (claimed.rowCount !== 1) {
        await client.query('ROLLBACK');
        return { status: 'duplicate' };
      }
      const value = await work(client);
      const committed = await client.query('COMMIT');
      // COMMIT of a transaction an application query aborted (its error caught) answers ROLLBACK, not an error.
      if (committed.command === 'ROLLBACK') {
        throw new Error(
          '[@payhook/core] the inbox transaction was rolled back at COMMIT: a query inside the handler failed and its error was caught.',
        );
      }
      return { status: 'done', value };
    } catch (error) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError as Error;
      }
      throw error;
    } finally {
      // A connection that could not roll back is destroyed, never returned to the pool mid-transaction.
      client.release(broken ?? false);
    }
  }

  /**
   * The transaction's client of a delivery this inbox is handling, typed as the pool's clients.
   *
   * @example
   * await inbox.client(delivery).query('INSERT INTO payments (id) VALUES ($1)', [payment.payment_id]);
   */
  client(delivery: { readonly transaction?: unknown }): C {
    return inboxClient<C>(delivery);
  }

  /**
   * Deletes up to `limit` expired rows (oldest first); resolves how many.
   *
   * @example
   * await inbox.prune({ limit: 1_000 });
   */
  prune(options?: PruneOptions): Promise<number> {
    return prune(this.#pool, this.#table, options?.limit ?? 1_000);
  }
}

/**
 * The inbox transaction's client of a delivery, for the application's writes; throws when the handler's store
 * is not a `PostgresInbox`.
 *
 * @example
 * webhook.on('refund', async (refund, _ctx, delivery) => {
 *   await inboxClient<pg.PoolClient>(delivery).query('INSERT INTO refunds (id) VALUES ($1)', [refund.operation_id]);
 * });
 */
export function inboxClient<C extends PgQueryable = PgPoolClientLike>(delivery: {
  readonly transaction?: unknown;
}): C {
  const tx = delivery.transaction as C | undefined;
  if (typeof tx?.query !== 'function') {
    throw new TypeError(
      '[@payhook/core] this delivery has no inbox transaction: set store: new PostgresInbox({ pool }) on the webhook handler.',
    );
  }
  return tx;
}
