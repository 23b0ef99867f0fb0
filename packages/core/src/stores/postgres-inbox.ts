import type { TransactionalStore, TransactionResult } from './contract.js';
import { ALREADY_PREPARED, isStatementLost, NO_SUCH_STATEMENT, Prepared } from './postgres-prepared.js';
import {
  explained,
  LOCK_NOT_AVAILABLE,
  nameOf,
  type PgPoolClientLike,
  type PgPoolLike,
  type PgQueryable,
  type PgResult,
  type PostgresTableOptions,
  type PruneOptions,
  prune,
  type Statement,
  statement,
  type Table,
  tableOf,
} from './postgres-table.js';

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

/**
 * How long the claim waits on a lock before the inbox asks which lock it is (the table's or a concurrent copy's
 * row): short, so a frozen database or a locked table is answered within the handler's storeTimeoutMs, and long
 * enough that a copy whose first commits meanwhile needs no second round trip.
 */
const PROBE_MS = 100;

/** `BEGIN` with the transaction's lock_timeout stashed (the claim puts it back) and the claim's own bound, if any. */
function begin(lockTimeoutMs: number | undefined): string {
  return `BEGIN; SELECT set_config('payhook.lock_timeout', current_setting('lock_timeout'), true)${
    lockTimeoutMs === undefined ? '' : `; SET LOCAL lock_timeout = ${lockTimeoutMs}`
  }`;
}

/** The claim's wait after the probe: what is left of its bound, or the transaction's own lock_timeout. */
function waitLeft(leftMs: number | undefined): string {
  return leftMs === undefined
    ? "SELECT set_config('lock_timeout', current_setting('payhook.lock_timeout'), true)"
    : `SET LOCAL lock_timeout = ${Math.max(1, Math.ceil(leftMs))}`;
}

type ClaimOptions = { readonly lockTimeoutMs?: number; readonly onWaiting?: () => void };
type ClaimState = 'claimed' | 'duplicate' | 'in_flight';

/** The names of the SQL-level prepared statements each connection holds: the claim is prepared once per connection. */
const preparedOn = new WeakMap<object, Set<string>>();

/**
 * A transactional inbox: each delivery runs in one transaction that inserts the notification's row and holds
 * the application's own writes (the handler receives the transaction's client: `inbox.client(delivery)`). Both
 * commit together or not at all, so the effect happens exactly once even if the process dies mid-way (the
 * database rolls the open transaction back). A concurrent copy waits on the row (up to the handler's
 * inFlightWaitMs), then answers duplicate, or 409 while the first still runs; a claim that finds the table locked
 * (a migration's DDL) answers 503 instead, within storeTimeoutMs. A handler failure rolls back the
 * row with the application's writes, so the redelivery is handled. Two round trips besides the handler's own:
 * `BEGIN` with the claim's `lock_timeout` and the claim (prepared once per connection; it also puts the
 * transaction's `lock_timeout` back), then `COMMIT`; three where the client has no `escapeLiteral`, or with
 * `prepare: false`.
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
  /** The claim as an SQL-level prepared statement, for the round trip that also carries BEGIN, while names are on. */
  readonly #session: { readonly name: string; readonly prepare: string };
  readonly #prepared: Prepared;

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
    const claim = `INSERT INTO ${t.name} AS i (key, done, token, expires_at, fence)
      VALUES ($1, true, NULL, now() + $2 * interval '1 millisecond', 1)
      ON CONFLICT (key) DO UPDATE
      SET done = true, token = NULL, expires_at = excluded.expires_at, fence = i.fence + 1
      WHERE i.expires_at <= now()
      RETURNING fence, set_config('lock_timeout', current_setting('payhook.lock_timeout'), true) AS lock_timeout`;
    this.#claim = statement(claim);
    const name = nameOf(`PREPARE (text, float8) AS ${claim}`);
    this.#session = { name, prepare: `PREPARE ${name} (text, float8) AS ${claim}` };
    this.#prepared = new Prepared('PostgresInbox', options.prepare);
  }

  async transaction<T>(
    key: string,
    work: (tx: C) => Promise<T>,
    options?: {
      readonly lockTimeoutMs?: number;
      readonly onWaiting?: () => void;
      readonly onLost?: (reason: unknown) => void;
    },
  ): Promise<TransactionResult<T>> {
    const client = await this.#lend();
    // A connection that dies while lent out emits 'error': the transaction is gone (the database rolls it back),
    // so the handlers hear it through `onLost` (their signal) while the query in flight, if any, rejects with it.
    const lost = (error: Error) => options?.onLost?.(error);
    client.on?.('error', lost);
    let broken: Error | undefined;
    try {
      const claim = await this.#claimRow(client, key, options);
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
   * BEGIN and the claim. A named claim the connection turned out not to hold, or to hold already, even after
   * `#beginWithClaim`'s one try again (only a pooler moving the transaction between connections does that), turns
   * names off for this inbox (one warning) and is claimed again unnamed: it ran nothing.
   */
  async #claimRow(client: C, key: string, options: ClaimOptions | undefined): Promise<ClaimState> {
    try {
      return await this.#claimRowAs(client, key, options);
    } catch (error) {
      // Not whether names are on now: a claim sent named may be refused after another one turned them off.
      if (!isStatementLost(error)) throw error;
      this.#prepared.stop(error);
      await client.query('ROLLBACK');
      return this.#claimRowAs(client, key, options);
    }
  }

  /**
   * BEGIN and the claim; anything but `claimed` is rolled back. BEGIN carries the lock_timeout the transaction
   * has (stashed for the claim to put back) and the claim's own bound, which must be in place before the claim
   * statement starts: a table lock (a migration) is waited for before any of the statement's own expressions run.
   * The first claim waits `PROBE_MS` at most; a longer wait is told apart by `#claimAfterWait`.
   */
  async #claimRowAs(client: C, key: string, options: ClaimOptions | undefined): Promise<ClaimState> {
    const waitMs = options?.lockTimeoutMs;
    const probeMs = waitMs === undefined ? undefined : Math.min(PROBE_MS, Math.max(1, Math.ceil(waitMs)));
    let claimed: PgResult | undefined;
    try {
      claimed =
        this.#prepared.named && quotes(client)
          ? await this.#beginWithClaim(client, begin(probeMs), key, this.#session)
          : await client.query(begin(probeMs)).then(() => client.query(this.#claimStatement(key)));
    } catch (error) {
      if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw explained(error, this.#table);
      await client.query('ROLLBACK');
      const leftMs = waitMs === undefined ? undefined : waitMs - probeMs!;
      claimed = await this.#claimAfterWait(client, key, leftMs, options?.onWaiting);
    }
    if (claimed === undefined) return 'in_flight';
    if (claimed.rowCount === 1) return 'claimed';
    await client.query('ROLLBACK');
    return 'duplicate';
  }

  /**
   * A claim that waited past `PROBE_MS` waits either on the table (DDL such as a migration holds or awaits it: the
   * store is unavailable, 503) or on the row of a concurrent copy (worth waiting for: it commits, or is still
   * running after `leftMs`). The table's lock alone (`ROW EXCLUSIVE`, what the claim's INSERT takes) tells which:
   * once it is held, the claim can wait on nothing but the row; `onWaiting` says so before that wait starts.
   * Resolves the claim's result, or `undefined` when the row was still held after `leftMs`.
   */
  async #claimAfterWait(
    client: C,
    key: string,
    leftMs: number | undefined,
    onWaiting: (() => void) | undefined,
  ): Promise<PgResult | undefined> {
    try {
      await client.query(
        `${begin(PROBE_MS)}; LOCK TABLE ${this.#table.name} IN ROW EXCLUSIVE MODE; ${waitLeft(leftMs)}`,
      );
    } catch (error) {
      if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw explained(error, this.#table);
      throw new Error(
        `[@payhook/core] the inbox table ${this.#table.name} is locked by another session (a migration or other DDL waits for it, or holds it): its lock was not granted to the claim within ${PROBE_MS} ms, so nothing was claimed; the service's retry is safe.`,
        { cause: error },
      );
    }
    onWaiting?.();
    try {
      return await client.query(this.#claimStatement(key));
    } catch (error) {
      if ((error as { code?: unknown }).code !== LOCK_NOT_AVAILABLE) throw explained(error, this.#table);
      await client.query('ROLLBACK');
      return undefined;
    }
  }

  /** The claim as one protocol-level statement: named while names are on. */
  #claimStatement(key: string) {
    return this.#prepared.config(this.#claim([key, this.#ttlMs]));
  }

  /**
   * BEGIN and the claim in one round trip: one simple-protocol string (the only way `pg` sends two statements
   * without waiting between them), the claim an `EXECUTE` of a statement prepared once per connection, its key
   * quoted by the client's own `escapeLiteral` (keys come from notification fields). A connection that lost the
   * statement (`DISCARD ALL`), or holds it unknown to this process, is rolled back and sent the other form once.
   */
  async #beginWithClaim(
    client: C & Quoting,
    begin: string,
    key: string,
    session: { readonly name: string; readonly prepare: string },
  ): Promise<PgResult> {
    // PostgreSQL text holds no NUL, and a query string ends at one: refused here, as a bound value would be.
    if (key.includes('\0')) throw new TypeError('[@payhook/core] a notification key holds a NUL character.');
    const held = preparedOn.get(client) ?? new Set<string>();
    preparedOn.set(client, held);
    const ttl = client.escapeLiteral(String(this.#ttlMs));
    const execute = `EXECUTE ${session.name}(${client.escapeLiteral(key)}, ${ttl})`;
    for (let retried = false; ; retried = true) {
      const prepare = held.has(session.name) ? '' : `${session.prepare}; `;
      try {
        const results = await client.query(`${begin}; ${prepare}${execute}`);
        held.add(session.name);
        // pg answers a string of several statements with one result each; the claim's is the last.
        return Array.isArray(results) ? (results.at(-1) as PgResult) : results;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (retried || (code !== NO_SUCH_STATEMENT && code !== ALREADY_PREPARED)) throw error;
        await client.query('ROLLBACK');
        if (code === NO_SUCH_STATEMENT) held.delete(session.name);
        else held.add(session.name);
      }
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

type Quoting = Required<Pick<PgPoolClientLike, 'escapeLiteral'>>;

function quotes<C extends PgPoolClientLike>(client: C): client is C & Quoting {
  return typeof client.escapeLiteral === 'function';
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
