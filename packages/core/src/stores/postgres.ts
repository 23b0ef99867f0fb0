import { randomBytes } from 'node:crypto';
import { Batcher } from './batcher.js';
import { DUPLICATE, IN_FLIGHT } from './claims.js';
import type { ClaimResult, DedupeStore } from './contract.js';
import { Prepared } from './postgres-prepared.js';
import {
  explained,
  type PgQueryable,
  type PgQueryConfig,
  type PgResult,
  type PostgresTableOptions,
  type PruneOptions,
  prune,
  statement,
  type Table,
  tableOf,
} from './postgres-table.js';

// The @payhook/core/postgres entry: PostgresStore here, the inbox and the table's helpers beside it.
export { inboxClient, PostgresInbox, type PostgresInboxOptions } from './postgres-inbox.js';
export { isStatementLost, Prepared } from './postgres-prepared.js';
export {
  type MigrateOptions,
  type Migration,
  migrate,
  migrationSql,
  type PgPoolClientLike,
  type PgPoolLike,
  type PgQueryable,
  type PgQueryConfig,
  type PgResult,
  type PostgresTableOptions,
  type PruneOptions,
  runMigration,
  type Statement,
  statement,
  type Table,
  tableOf,
} from './postgres-table.js';

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
 * from the database clock, so instances need not agree on time. Every statement is a named prepared statement
 * (unnamed with `prepare: false`, or from the first time a pooler shows it cannot keep them, said in one warning);
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
  readonly #prepared: Prepared;
  readonly #claimBatcher: Batcher<Claim, ClaimResult | undefined> | undefined;
  readonly #commitBatcher: Batcher<Commit, boolean> | undefined;

  constructor(options: PostgresStoreOptions) {
    if (typeof options.pool?.query !== 'function') {
      throw new TypeError('[@payhook/core] PostgresStore needs a pg Pool or Client: pass { pool }.');
    }
    this.#pool = options.pool;
    const t = tableOf(options.table);
    this.#table = t;
    this.#sql = storeStatements(t);
    this.#prepared = new Prepared('PostgresStore', options.prepare);
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
    return this.#prepared.query(this.#pool, config).catch((error: unknown) => {
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
function storeStatements(t: Table) {
  const takeOver = `ON CONFLICT (key) DO UPDATE
    SET done = false, token = excluded.token, expires_at = excluded.expires_at, fence = i.fence + 1
    WHERE i.expires_at <= now()`;
  const claim = statement(
    `INSERT INTO ${t.name} AS i (key, done, token, expires_at, fence)
    VALUES ($1, false, $2, now() + $3 * interval '1 millisecond', 1)
    ${takeOver} RETURNING fence`,
  );
  const claims = statement(
    `INSERT INTO ${t.name} AS i (key, done, token, expires_at, fence)
    SELECT c.key, false, c.token, now() + c.ms * interval '1 millisecond', 1
    FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS c(key, token, ms, n) ORDER BY c.n
    ${takeOver} RETURNING key, fence`,
  );
  const state = statement(`SELECT done FROM ${t.name} WHERE key = $1 AND expires_at > now()`);
  const states = statement(
    `SELECT key, done FROM ${t.name} WHERE key = ANY($1::text[]) AND expires_at > now()`,
  );
  // The caller's token still holds the key (not committed yet), or nobody holds it (a lease that ran out).
  const fenced = `ON CONFLICT (key) DO UPDATE
    SET done = true, token = excluded.token, expires_at = excluded.expires_at
    WHERE (i.token = excluded.token AND NOT i.done) OR i.expires_at <= now()`;
  const commit = statement(
    `INSERT INTO ${t.name} AS i (key, done, token, expires_at)
    VALUES ($1, true, $2, now() + $3 * interval '1 millisecond')
    ${fenced} RETURNING 1`,
  );
  const commits = statement(
    `INSERT INTO ${t.name} AS i (key, done, token, expires_at)
    SELECT c.key, true, c.token, now() + c.ms * interval '1 millisecond'
    FROM unnest($1::text[], $2::text[], $3::float8[]) WITH ORDINALITY AS c(key, token, ms, n) ORDER BY c.n
    ${fenced} RETURNING key`,
  );
  const renew = statement(
    `UPDATE ${t.name} SET expires_at = now() + $3 * interval '1 millisecond'
    WHERE key = $1 AND token = $2 AND NOT done`,
  );
  const release = statement(
    `UPDATE ${t.name} SET expires_at = now() WHERE key = $1 AND token = $2 AND NOT done AND expires_at > now()`,
  );
  const forget = statement(`DELETE FROM ${t.name} WHERE key = $1 AND done`);
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
