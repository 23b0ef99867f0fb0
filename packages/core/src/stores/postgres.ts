import { createHash, randomBytes } from 'node:crypto';
import type { ClaimResult, DedupeStore, TransactionalStore, TransactionResult } from '../dedupe.js';
import { Batcher } from './batcher.js';
import { DUPLICATE, IN_FLIGHT } from './claims.js';

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

export interface PostgresStoreOptions extends PostgresTableOptions {
  /** A `pg` `Pool` (or one connected `Client`), shared with the rest of the app. */
  pool: PgQueryable;
  /**
   * Claims (and commits) made while others are being sent share one statement and one transaction: one WAL
   * flush for many webhooks. A lone claim goes out at once, with the same statement as without it.
   * @default true
   */
  batch?: boolean;
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

interface Table {
  /** The quoted, possibly schema-qualified name. */
  readonly name: string;
  /** The quoted name of the expiry index (an index lives in its table's schema, so it is never qualified). */
  readonly index: string;
  /** The call that makes or updates this table, as an error message tells it. */
  readonly migrate: string;
}

function tableOf(table = 'payhook_inbox'): Table {
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
function explained(error: unknown, table: Table): unknown {
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
type Statement = (values: unknown[]) => PgQueryConfig;

function statement(text: string, prepare = true): Statement {
  if (!prepare) return (values) => ({ text, values });
  // Named for its text, so stores of two tables on one pool never share a name.
  const name = `payhook_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
  return (values) => ({ name, text, values });
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

interface Claim {
  readonly key: string;
  readonly token: string;
  readonly leaseMs: number;
}

interface Commit {
  readonly key: string;
  readonly token: string;
  readonly ttlMs: number;
}

/** Sends at most this many claims (or commits) in one statement. */
const MAX_BATCH = 256;
/** Batched statements of one kind under way at once; calls arriving meanwhile wait for the next. */
const BATCH_LANES = 4;

/** Each key once per statement (ON CONFLICT cannot update a row twice), in key order (a fixed lock order). */
function rounds<T extends { readonly key: string }>(items: readonly T[]): T[][] {
  const result: { keys: Set<string>; items: T[] }[] = [];
  for (const item of items) {
    let round = result.find((r) => !r.keys.has(item.key));
    if (round === undefined) {
      round = { keys: new Set(), items: [] };
      result.push(round);
    }
    round.keys.add(item.key);
    round.items.push(item);
  }
  return result.map((r) => r.items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
}

/**
 * Duplicate detection shared by every instance through PostgreSQL, with leases as in `RedisStore`: `claim` is
 * one `INSERT … ON CONFLICT DO UPDATE … WHERE expired` (an expired lease or done row is taken over, its fence
 * counted on), plus a `SELECT` only when the key is live; `commit` writes the done row for the TTL only while the
 * caller's token holds the key or nobody does, and answers `false` otherwise (a stale run: fencing); `renew` and
 * `release` act only for the token's holder (`release` ends the lease and keeps the row and its fence). Times come
 * from the database clock, so instances need not agree on time. Every statement is a named prepared statement;
 * claims and commits made while others are under way share one statement (`batch`, on by default).
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
  readonly #sql: StoreStatements;
  readonly #claimBatcher: Batcher<Claim, ClaimResult | undefined> | undefined;
  readonly #commitBatcher: Batcher<Commit, boolean> | undefined;

  constructor(options: PostgresStoreOptions) {
    if (typeof options.pool?.query !== 'function') {
      throw new TypeError('[@payhook/core] PostgresStore needs a pg Pool or Client: pass { pool }.');
    }
    this.#pool = options.pool;
    const t = tableOf(options.table);
    this.#table = t;
    this.#sql = storeStatements(t, options.prepare);
    if (options.batch ?? true) {
      const lanes = { lanes: BATCH_LANES, max: MAX_BATCH };
      this.#claimBatcher = new Batcher((claims) => this.#claimAll(claims), lanes);
      this.#commitBatcher = new Batcher((commits) => this.#commitAll(commits), lanes);
    }
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const token = randomBytes(16).toString('hex');
    const claim = { key, token, leaseMs: Math.ceil(leaseMs) };
    const first = await (this.#claimBatcher?.call(claim) ?? this.#claimOne(claim));
    // A row deleted or expired between the INSERT and the SELECT is claimable again: try once more.
    return first ?? (await this.#claimOne(claim)) ?? IN_FLIGHT;
  }

  async commit(key: string, token: string, ttlMs: number): Promise<boolean> {
    const commit = { key, token, ttlMs: Math.ceil(ttlMs) };
    if (this.#commitBatcher) return this.#commitBatcher.call(commit);
    const committed = await this.#query(this.#sql.commit([key, token, commit.ttlMs]));
    return committed.rowCount === 1;
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const renewed = await this.#query(this.#sql.renew([key, token, Math.ceil(leaseMs)]));
    return renewed.rowCount === 1;
  }

  async release(key: string, token: string): Promise<void> {
    await this.#query(this.#sql.release([key, token]));
  }

  /** Deletes a done row (a committed notification's handler completions: nothing reads them again). */
  async forget(key: string): Promise<void> {
    await this.#query(this.#sql.forget([key]));
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

  #query(config: PgQueryConfig): Promise<PgResult> {
    return this.#pool.query(config).catch((error: unknown) => {
      throw explained(error, this.#table);
    });
  }

  /** One claim; `undefined` when the row changed between the INSERT and the SELECT. */
  async #claimOne({ key, token, leaseMs }: Claim): Promise<ClaimResult | undefined> {
    const claimed = await this.#query(this.#sql.claim([key, token, leaseMs]));
    if (claimed.rowCount === 1) return claimedBy(token, (claimed.rows[0] as { fence: unknown }).fence);
    const state = await this.#query(this.#sql.state([key]));
    const row = state.rows[0] as { done: boolean } | undefined;
    return row === undefined ? undefined : row.done ? DUPLICATE : IN_FLIGHT;
  }

  /**
   * Claims sent together: one statement for their distinct keys, one `SELECT` for the keys not taken. Copies of one
   * key (a redelivery, a flood of replays) take the answer of its first claim, as a later statement would give
   * them, so they cost no round trip.
   */
  async #claimAll(claims: readonly Claim[]): Promise<(ClaimResult | undefined)[]> {
    if (claims.length === 1) return [await this.#claimOne(claims[0]!)];
    const firsts = new Map<string, Claim>();
    for (const c of claims) if (!firsts.has(c.key)) firsts.set(c.key, c);
    const [round] = rounds([...firsts.values()]) as [Claim[]];
    const values = [round.map((c) => c.key), round.map((c) => c.token), round.map((c) => c.leaseMs)];
    const claimed = await this.#query(this.#sql.claims(values));
    const fences = new Map((claimed.rows as { key: string; fence: unknown }[]).map((r) => [r.key, r.fence]));
    const taken = round.filter((c) => !fences.has(c.key));
    // Should the SELECT fail, the claims granted stand (failing them would strand their leases), and the keys it
    // was for are claimed again one by one, each failing alone if the database still does.
    const states =
      taken.length === 0
        ? new Map<string, boolean>()
        : await this.#query(this.#sql.states([taken.map((c) => c.key)])).then(
            (result) => new Map((result.rows as Row[]).map((r) => [r.key, r.done])),
            () => new Map<string, boolean>(),
          );
    return claims.map((c) => {
      const done = states.get(c.key);
      if (!fences.has(c.key)) return done === undefined ? undefined : done ? DUPLICATE : IN_FLIGHT;
      return firsts.get(c.key) === c ? claimedBy(c.token, fences.get(c.key)) : IN_FLIGHT;
    });
  }

  /** Commits sent together: one statement per round of distinct keys. */
  async #commitAll(commits: readonly Commit[]): Promise<boolean[]> {
    const answers = new Map<Commit, boolean>();
    for (const round of rounds(commits)) {
      const values = [round.map((c) => c.key), round.map((c) => c.token), round.map((c) => c.ttlMs)];
      const committed = await this.#query(
        round.length === 1 ? this.#sql.commit(values.map((v) => v[0])) : this.#sql.commits(values),
      );
      const keys = new Set((committed.rows as { key?: string }[]).map((r) => r.key));
      for (const c of round) answers.set(c, round.length === 1 ? committed.rowCount === 1 : keys.has(c.key));
    }
    return commits.map((c) => answers.get(c)!);
  }
}

/** PostgresStore's statements on table `t`: one row each, and the batched forms over arrays of keys. */
function storeStatements(t: Table, prepare: boolean | undefined) {
  const takeOver = `ON CONFLICT (key) DO UPDATE
    SET done = false, token = excluded.token, expires_at = excluded.expires_at, fence = i.fence + 1
    WHERE i.expires_at <= now()`;
  const claim = statement(
    `INSERT INTO ${t.name} AS i (key, done, token, expires_at, fence)
    VALUES ($1, false, $2, now() + $3 * interval '1 millisecond', 1)
    ${takeOver} RETURNING fence`,
    prepare,
  );
  const claims = statement(
    `INSERT INTO ${t.name} AS i (key, done, token, expires_at, fence)
    SELECT c.key, false, c.token, now() + c.ms * interval '1 millisecond', 1
    FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS c(key, token, ms, n) ORDER BY c.n
    ${takeOver} RETURNING key, fence`,
    prepare,
  );
  const state = statement(`SELECT done FROM ${t.name} WHERE key = $1 AND expires_at > now()`, prepare);
  const states = statement(
    `SELECT key, done FROM ${t.name} WHERE key = ANY($1::text[]) AND expires_at > now()`,
    prepare,
  );
  // The caller's token still holds the key (not committed yet), or nobody holds it (a lease that ran out).
  const fenced = `ON CONFLICT (key) DO UPDATE
    SET done = true, token = excluded.token, expires_at = excluded.expires_at
    WHERE (i.token = excluded.token AND NOT i.done) OR i.expires_at <= now()`;
  const commit = statement(
    `INSERT INTO ${t.name} AS i (key, done, token, expires_at)
    VALUES ($1, true, $2, now() + $3 * interval '1 millisecond')
    ${fenced} RETURNING 1`,
    prepare,
  );
  const commits = statement(
    `INSERT INTO ${t.name} AS i (key, done, token, expires_at)
    SELECT c.key, true, c.token, now() + c.ms * interval '1 millisecond'
    FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS c(key, token, ms, n) ORDER BY c.n
    ${fenced} RETURNING key`,
    prepare,
  );
  const renew = statement(
    `UPDATE ${t.name} SET expires_at = now() + $3 * interval '1 millisecond'
    WHERE key = $1 AND token = $2 AND NOT done`,
    prepare,
  );
  const release = statement(
    `UPDATE ${t.name} SET expires_at = now() WHERE key = $1 AND token = $2 AND NOT done AND expires_at > now()`,
    prepare,
  );
  const forget = statement(`DELETE FROM ${t.name} WHERE key = $1 AND done`, prepare);
  return { claim, claims, state, states, commit, commits, renew, release, forget };
}

type StoreStatements = ReturnType<typeof storeStatements>;

interface Row {
  key: string;
  done: boolean;
}

function claimedBy(token: string, fence: unknown): ClaimResult {
  return { status: 'claimed', token, fence: Number(fence) };
}

/**
 * A transactional inbox: each delivery runs in one transaction that inserts the notification's row and holds
 * the application's own writes (the handler receives the transaction's client: `inbox.client(delivery)`). Both
 * commit together or not at all, so the effect happens exactly once even if the process dies mid-way (the
 * database rolls the open transaction back). A concurrent copy waits on the row (up to the handler's
 * storeTimeoutMs), then answers duplicate, or 409 while the first still runs; a handler failure rolls back the
 * row with the application's writes, so the redelivery is handled. Three round trips besides the handler's own:
 * `BEGIN` with the claim's `lock_timeout`, the claim (a named prepared statement that also puts the transaction's
 * `lock_timeout` back), `COMMIT`.
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
  readonly #claim: Statement;

  constructor(options: PostgresInboxOptions<C>) {
    if (typeof options.pool?.connect !== 'function') {
      throw new TypeError('[@payhook/core] PostgresInbox needs a pg Pool: pass { pool: new pg.Pool(...) }.');
    }
    this.#pool = options.pool;
    this.#ttlMs = options.ttlMs ?? 7 * 24 * 60 * 60 * 1000;
    const t = tableOf(options.table);
    this.#table = t;
    // RETURNING puts back the lock_timeout BEGIN stashed (see transaction()), so the application's own queries
    // keep theirs; without a row returned (a duplicate) the transaction rolls back, and the setting with it.
    this.#claim = statement(
      `INSERT INTO ${t.name} AS i (key, done, token, expires_at, fence)
      VALUES ($1, true, NULL, now() + $2 * interval '1 millisecond', 1)
      ON CONFLICT (key) DO UPDATE
      SET done = true, token = NULL, expires_at = excluded.expires_at, fence = i.fence + 1
      WHERE i.expires_at <= now()
      RETURNING fence, set_config('lock_timeout', current_setting('payhook.lock_timeout'), true) AS lock_timeout`,
      options.prepare,
    );
  }

  async transaction<T>(
    key: string,
    work: (tx: C) => Promise<T>,
    options?: { readonly lockTimeoutMs?: number; readonly onLost?: (reason: unknown) => void },
  ): Promise<TransactionResult<T>> {
    const client = await this.#lend();
    // A connection that dies while lent out emits 'error': the transaction is gone (the database rolls it back),
    // so the handlers hear it through `onLost` (their signal) while the query in flight, if any, rejects with it.
    const lost = (error: Error) => options?.onLost?.(error);
    client.on?.('error', lost);
    let broken: Error | undefined;
    try {
      const claim = await this.#claimRow(client, key, options?.lockTimeoutMs);
      if (claim !== 'claimed') return { status: claim };
      const value = await work(client);
      // A run whose connection died has nothing left to commit: its transaction (the row's lock with it) was
      // rolled back by the database, and this COMMIT fails. While the transaction lives, no other run can take
      // the row: the lock, not the fence, is what makes the effect happen once.
      const committed = await client.query('COMMIT');
      // COMMIT of a transaction an application query aborted (its error caught) answers ROLLBACK, not an error.
      if (committed.command === 'ROLLBACK') {
        throw new Error(
          '[@payhook/core] the inbox transaction was rolled back at COMMIT: a query inside the handler failed and its error was caught.',
        );
      }
      return { status: 'done', value };
    } catch (error) {
      broken = await rollBack(client);
      throw error;
    } finally {
      client.removeListener?.('error', lost);
      // A connection that could not roll back is destroyed, never returned to the pool mid-transaction.
      client.release(broken ?? false);
    }
  }

  /** A connection from the pool, heard once for 'error' (unheard, a connection dying while lent would crash the app). */
  async #lend(): Promise<C> {
    const client = await this.#pool.connect();
    if (typeof client?.release !== 'function') {
      throw new TypeError(
        '[@payhook/core] PostgresInbox needs a pg Pool (its connect() lends a client); a single Client cannot run concurrent transactions.',
      );
    }
    if (!guarded.has(client) && typeof client.on === 'function') {
      client.on('error', () => {});
      guarded.add(client);
    }
    return client;
  }

  /**
   * BEGIN and the claim, in two round trips; anything but `claimed` is rolled back. The first carries BEGIN, the
   * lock_timeout the transaction has (stashed for the claim to put back), and the claim's own bound, which must be
   * in place before the claim statement starts: a table lock (a migration) is waited for before any of the
   * statement's own expressions run.
   */
  async #claimRow(
    client: C,
    key: string,
    lockTimeoutMs: number | undefined,
  ): Promise<'claimed' | 'duplicate' | 'in_flight'> {
    await client.query(
      `BEGIN; SELECT set_config('payhook.lock_timeout', current_setting('lock_timeout'), true)${
        lockTimeoutMs === undefined
          ? ''
          : `; SET LOCAL lock_timeout = ${Math.max(1, Math.ceil(lockTimeoutMs))}`
      }`,
    );
    let claimed: PgResult;
    try {
      claimed = await client.query(this.#claim([key, this.#ttlMs]));
    } catch (error) {
      if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw explained(error, this.#table);
      await client.query('ROLLBACK');
      return 'in_flight';
    }
    if (claimed.rowCount === 1) return 'claimed';
    await client.query('ROLLBACK');
    return 'duplicate';
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

/** Rolls an inbox transaction back; resolves the error when that failed too (the connection is then destroyed). */
async function rollBack(client: PgPoolClientLike): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (error) {
    return error as Error;
  }
}
