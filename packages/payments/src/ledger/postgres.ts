import {
  isStatementLost,
  type MigrateOptions,
  type PgQueryable,
  Prepared,
  runMigration,
  type Statement,
  statement,
  tableOf,
} from '@payhook/core/postgres';
import type { Appended, LedgerStore } from './contract.js';
import type { LedgerFact } from './fact.js';

export interface PostgresLedgerStoreOptions {
  /** A `pg` `Pool` (or one connected `Client`), shared with the rest of the app. */
  pool: PgQueryable;
  /**
   * The ledger's table, optionally schema-qualified; made by `migrateLedger`.
   * @default 'payhook_ledger'
   */
  table?: string;
  /**
   * Send the statements as named prepared statements. Behind a pooler that cannot keep them (PgBouncer before 1.21
   * in transaction mode) the store turns them off at the server's first refusal, with one warning; `false` starts
   * without them.
   * @default true
   */
  prepare?: boolean;
}

function ledgerTable(table = 'payhook_ledger') {
  return {
    name: tableOf(table).name,
    migrate:
      table === 'payhook_ledger' ? 'migrateLedger(pool)' : `migrateLedger(pool, { table: '${table}' })`,
  };
}

/**
 * The SQL that creates the ledger's table; safe to run again.
 *
 * @example
 * await pool.query(ledgerMigrationSql('billing.payhook_ledger'));
 */
export function ledgerMigrationSql(table?: string): string {
  const t = ledgerTable(table);
  return `-- The payhook payment ledger: one row per payment (order_id), its log of facts in the order they were recorded.
CREATE TABLE IF NOT EXISTS ${t.name} (
  order_id   text        PRIMARY KEY,
  facts      jsonb       NOT NULL,
  keys       text[]      NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
`;
}

/**
 * Creates the ledger's table under the rules of `migrate` (docs/stores.md): when it exists it takes no lock; else
 * it runs under an advisory lock with `lock_timeout` = `lockTimeoutMs`, tried `attempts` times.
 *
 * @example
 * await migrateLedger(pool); // or migrateLedger(pool, { table: 'billing.payhook_ledger' })
 */
export async function migrateLedger(client: PgQueryable, options?: MigrateOptions): Promise<void> {
  const t = ledgerTable(options?.table);
  await runMigration(client, options, {
    missing: async () => {
      const result = await client.query('SELECT to_regclass($1) IS NOT NULL AS table', [t.name]);
      return (result.rows[0] as { table: boolean }).table ? [] : ['the table'];
    },
    sql: ledgerMigrationSql(options?.table),
    failure: (_missing, ms, attempts, cause) =>
      new Error(
        `[@payhook/payments] migrateLedger could not create ${t.name}: its lock was not granted within ${ms} ms (lockTimeoutMs) in ${attempts} attempts. Nothing was changed; run it again, or raise lockTimeoutMs.`,
        { cause },
      ),
  });
}

/**
 * The ledger's store in PostgreSQL, shared by every instance: one row per payment, its facts a `jsonb` array. An
 * append is one statement (an upsert that takes the row's lock, so concurrent deliveries of one payment take turns
 * and each sees the facts before it). With `PostgresInbox` it runs on the claim's transaction, so the fact commits
 * with the claim and the handlers' writes, or not at all; the row stays locked until then, so the handlers of one
 * payment's deliveries run one after the other, in the order of the log.
 *
 * @example
 * import { migrateLedger, PostgresLedgerStore } from '@payhook/payments/postgres';
 * await migrateLedger(pool);
 * const ledger = createPaymentLedger({ store: new PostgresLedgerStore({ pool }) });
 */
export class PostgresLedgerStore implements LedgerStore {
  readonly name = 'postgres';
  readonly #pool: PgQueryable;
  readonly #migrate: string;
  readonly #append: Statement;
  readonly #read: Statement;
  readonly #prepared: Prepared;

  constructor(options: PostgresLedgerStoreOptions) {
    if (typeof options.pool?.query !== 'function') {
      throw new TypeError('[@payhook/payments] PostgresLedgerStore needs a pg Pool or Client (pool).');
    }
    const t = ledgerTable(options.table);
    this.#prepared = new Prepared('PostgresLedgerStore', options.prepare);
    this.#pool = options.pool;
    this.#migrate = t.migrate;
    // A key recorded before appends nothing: the second SELECT answers the row as it was (committed earlier, or
    // written by this transaction), with the fact's position.
    this.#append = statement(
      `WITH up AS (
         INSERT INTO ${t.name} AS l (order_id, facts, keys) VALUES ($1, jsonb_build_array($3::jsonb), ARRAY[$2::text])
         ON CONFLICT (order_id) DO UPDATE
         SET facts = l.facts || jsonb_build_array($3::jsonb), keys = l.keys || $2::text, updated_at = now()
         WHERE NOT ($2::text = ANY (l.keys))
         RETURNING facts, cardinality(keys) - 1 AS at)
       SELECT facts, at FROM up
       UNION ALL
       SELECT facts, array_position(keys, $2::text) - 1 FROM ${t.name} WHERE order_id = $1 AND NOT EXISTS (SELECT 1 FROM up)`,
    );
    this.#read = statement(`SELECT facts FROM ${t.name} WHERE order_id = $1`);
  }

  async append(orderId: string, fact: LedgerFact, transaction?: unknown): Promise<Appended> {
    const values = [orderId, fact.k, JSON.stringify(fact)];
    const result = isQueryable(transaction)
      ? await this.#inTransaction(transaction, this.#append, values)
      : await this.#query(this.#pool, this.#append, values);
    const row = result.rows[0] as { facts: LedgerFact[]; at: number } | undefined;
    if (row === undefined) {
      throw new Error(
        '[@payhook/payments] the ledger row was neither written nor found (was it deleted meanwhile?).',
      );
    }
    return { log: row.facts, at: Number(row.at) };
  }

  async read(orderId: string): Promise<readonly LedgerFact[]> {
    const result = await this.#query(this.#pool, this.#read, [orderId]);
    return (result.rows[0] as { facts: LedgerFact[] } | undefined)?.facts ?? [];
  }

  /**
   * Within the caller's transaction a refused named statement cannot be sent again (the transaction is aborted):
   * names go off for the next deliveries, and this one fails as any store error does (the delivery is redelivered).
   */
  async #inTransaction(db: PgQueryable, query: Statement, values: unknown[]) {
    try {
      return await this.#query(db, query, values, false);
    } catch (error) {
      if (isStatementLost(error)) this.#prepared.stop(error);
      throw error;
    }
  }

  async #query(db: PgQueryable, query: Statement, values: unknown[], retry = true) {
    try {
      const config = query(values);
      return await (retry ? this.#prepared.query(db, config) : db.query(this.#prepared.config(config)));
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== '42P01') throw error;
      throw new Error(
        `[@payhook/payments] the ledger's table does not exist: run ${this.#migrate} from @payhook/payments/postgres before the first delivery.`,
        { cause: error },
      );
    }
  }
}

function isQueryable(value: unknown): value is PgQueryable {
  return typeof (value as PgQueryable | undefined)?.query === 'function';
}
