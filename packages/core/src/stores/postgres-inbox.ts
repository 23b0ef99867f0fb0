import type { TransactionalStore, TransactionResult } from '../dedupe.js';
import {
  explained,
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

/** SQLSTATE of a lock wait that ran past `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';

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
