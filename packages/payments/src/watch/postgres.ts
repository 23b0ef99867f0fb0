import {
  type MigrateOptions,
  type PgQueryable,
  Prepared,
  runMigration,
  type Statement,
  statement,
  tableOf,
} from '@payhook/core/postgres';
import type { WatchedPayment, WatchStore } from './contract.js';
import { entryId, removeId, watchId } from './contract.js';

export interface PostgresWatchStoreOptions {
  /** A `pg` `Pool` (or one connected `Client`), shared with the rest of the app. */
  pool: PgQueryable;
  /**
   * The watch's table, optionally schema-qualified; made by `migrateWatch`.
   * @default 'payhook_watch'
   */
  table?: string;
  /**
   * Send the statements as named prepared statements. Behind a pooler that cannot keep them (PgBouncer before 1.21
   * in transaction mode) the first refusal turns them off for good, with one warning; `false` starts that way.
   * @default true
   */
  prepare?: boolean;
}

/** The table's quoted name and its deadline index's, checked as the inbox's are. */
function watchTable(table = 'payhook_watch') {
  const t = tableOf(table);
  const last = table.split('.').pop()!;
  return {
    name: t.name,
    index: `${last}_deadline_idx`,
    migrate: table === 'payhook_watch' ? 'migrateWatch(pool)' : `migrateWatch(pool, { table: '${table}' })`,
  };
}

/**
 * The SQL that creates the watch's table and its deadline index; safe to run again (each part checked first).
 *
 * @example
 * await pool.query(watchMigrationSql('billing.payhook_watch'));
 */
export function watchMigrationSql(table?: string): string {
  const t = watchTable(table);
  return `-- The payhook payment watch: one row per payment created and not yet settled by a final notification.
CREATE TABLE IF NOT EXISTS ${t.name} (
  id         text        PRIMARY KEY,
  order_id   text        NOT NULL,
  operation  text        NOT NULL,
  created_at timestamptz NOT NULL,
  deadline   timestamptz NOT NULL,
  tries      integer     NOT NULL DEFAULT 0,
  unreachable_since timestamptz,
  pending_since timestamptz
);
DO $$ BEGIN
  -- A table made before unreachable_since or pending_since gains it (instantly: nullable, no default).
  IF NOT EXISTS (SELECT 1 FROM pg_attribute
                 WHERE attrelid = '${t.name}'::regclass AND attname = 'unreachable_since' AND NOT attisdropped) THEN
    ALTER TABLE ${t.name} ADD COLUMN unreachable_since timestamptz;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_attribute
                 WHERE attrelid = '${t.name}'::regclass AND attname = 'pending_since' AND NOT attisdropped) THEN
    ALTER TABLE ${t.name} ADD COLUMN pending_since timestamptz;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                 WHERE i.indrelid = '${t.name}'::regclass AND c.relname = '${t.index}') THEN
    CREATE INDEX IF NOT EXISTS "${t.index}" ON ${t.name} (deadline);
  END IF;
END $$;
`;
}

/**
 * Creates the watch's table and its deadline index under the rules of `migrate` (docs/stores.md): when nothing is
 * missing it takes no lock; a change runs under an advisory lock with `lock_timeout` = `lockTimeoutMs`, tried
 * `attempts` times.
 *
 * @example
 * await migrateWatch(pool); // or migrateWatch(pool, { table: 'billing.payhook_watch' })
 */
export async function migrateWatch(client: PgQueryable, options?: MigrateOptions): Promise<void> {
  const t = watchTable(options?.table ?? 'payhook_watch');
  await runMigration(client, options, {
    missing: async () => {
      const result = await client.query(
        `SELECT c.oid IS NOT NULL AS table,
           EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = c.oid AND attname = 'unreachable_since'
                   AND NOT attisdropped) AS since,
           EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = c.oid AND attname = 'pending_since'
                   AND NOT attisdropped) AS pending,
           EXISTS (SELECT 1 FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
                   WHERE i.indrelid = c.oid AND x.relname = $2) AS index
         FROM (SELECT to_regclass($1) AS oid) AS c`,
        [t.name, t.index],
      );
      const found = result.rows[0] as { table: boolean; since: boolean; pending: boolean; index: boolean };
      if (!found.table) return ['the table'];
      return [
        ...(found.since ? [] : ['the unreachable_since column']),
        ...(found.pending ? [] : ['the pending_since column']),
        ...(found.index ? [] : ['the deadline index']),
      ];
    },
    sql: watchMigrationSql(options?.table),
    failure: (missing, ms, attempts, cause) =>
      new Error(
        `[@payhook/payments] migrateWatch could not add ${missing.join(' and ')} of ${t.name}: its lock was not granted within ${ms} ms (lockTimeoutMs) in ${attempts} attempts. Nothing was changed; run it again, or raise lockTimeoutMs.`,
        { cause },
      ),
  });
}

const MS = (param: string) => `to_timestamp(${param}::float8 / 1000)`;
const EPOCH_MS = (column: string) => `round(extract(epoch from ${column}) * 1000)::float8`;

/**
 * The watch's store in PostgreSQL, shared by every instance: one row per payment in `payhook_watch` (made by
 * `migrateWatch`). `take` is one `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED) RETURNING`: two runs at
 * once never take one row twice, nor wait for each other.
 *
 * @example
 * import { migrateWatch, PostgresWatchStore } from '@payhook/core/postgres';
 * await migrateWatch(pool);
 * const watch = createPaymentWatch({ api, webhook, store: new PostgresWatchStore({ pool }) });
 */
export class PostgresWatchStore implements WatchStore {
  readonly name = 'postgres';
  readonly #pool: PgQueryable;
  readonly #table: string;
  readonly #add: Statement;
  readonly #take: Statement;
  readonly #remove: Statement;
  readonly #giveBack: Statement;
  readonly #prepared: Prepared;

  constructor(options: PostgresWatchStoreOptions) {
    if (typeof options.pool?.query !== 'function') {
      throw new TypeError('[@payhook/payments] PostgresWatchStore needs a pg Pool or Client (pool).');
    }
    const t = watchTable(options.table);
    const name = t.name;
    this.#prepared = new Prepared('PostgresWatchStore', options.prepare);
    this.#pool = options.pool;
    this.#table = t.migrate;
    this.#add = statement(
      `INSERT INTO ${name} (id, order_id, operation, created_at, deadline, tries)
       VALUES ($1, $2, $3, ${MS('$4')}, ${MS('$5')}, $6) ON CONFLICT (id) DO NOTHING`,
    );
    this.#take = statement(
      // RETURNING keeps no order: the rows come back sorted by the deadline they had when taken.
      `WITH due AS (SELECT id, deadline, unreachable_since FROM ${name} WHERE deadline <= ${MS('$1')}
                    ORDER BY deadline LIMIT $3 FOR UPDATE SKIP LOCKED),
            taken AS (UPDATE ${name} w SET tries = w.tries + 1, deadline = ${MS('$2')}, unreachable_since = NULL,
                                           pending_since = NULL
                      FROM due WHERE w.id = due.id
                      RETURNING w.order_id, w.operation, w.tries, w.created_at, due.deadline AS due_at,
                                due.unreachable_since AS since)
       SELECT order_id, operation, tries, ${EPOCH_MS('created_at')} AS created_at, ${EPOCH_MS('since')} AS since
       FROM taken ORDER BY due_at`,
    );
    this.#remove = statement(`DELETE FROM ${name} WHERE id = $1`);
    // Given back by the entry's latest take (its deadline still the one that take set): the earliest of the
    // unreachable_since stored, pending and given; by an earlier take: only held pending (WatchStore.giveBack).
    this.#giveBack = statement(
      `UPDATE ${name} w SET tries = greatest(w.tries - 1, 0),
         unreachable_since = CASE WHEN w.deadline = ${MS('g.deadline')}
           THEN least(w.unreachable_since, w.pending_since, ${MS('g.since')}) ELSE w.unreachable_since END,
         pending_since = CASE WHEN w.deadline = ${MS('g.deadline')}
           THEN NULL ELSE least(w.pending_since, ${MS('g.since')}) END
       FROM unnest($1::text[], $2::float8[], $3::float8[]) AS g(id, since, deadline) WHERE w.id = g.id`,
    );
  }

  async add(payment: WatchedPayment): Promise<boolean> {
    const { orderId, operation, createdAt, deadline, tries } = payment;
    const result = await this.#query(this.#add, [
      watchId(orderId, operation),
      orderId,
      operation,
      createdAt,
      deadline,
      tries,
    ]);
    return (result.rowCount ?? 0) > 0;
  }

  async take(now: number, nextDeadline: number, limit: number): Promise<WatchedPayment[]> {
    const result = await this.#query(this.#take, [now, nextDeadline, Math.max(0, Math.floor(limit))]);
    type Row = {
      order_id: string;
      operation: string;
      tries: number;
      created_at: number;
      since: number | null;
    };
    // In the order the SQL answers: oldest deadline first.
    return (result.rows as Row[]).map((row) => ({
      orderId: row.order_id,
      operation: row.operation,
      createdAt: Number(row.created_at),
      deadline: nextDeadline,
      tries: Number(row.tries),
      ...(row.since === null ? {} : { unreachableSince: Number(row.since) }),
    }));
  }

  async giveBack(payments: readonly WatchedPayment[]): Promise<void> {
    if (payments.length === 0) return;
    const ids = payments.map((p) => entryId(p.orderId, p.operation));
    await this.#query(this.#giveBack, [
      ids,
      payments.map((p) => p.unreachableSince ?? null),
      payments.map((p) => p.deadline),
    ]);
  }

  async remove(orderId: string, operation: string): Promise<boolean> {
    return ((await this.#query(this.#remove, [removeId(orderId, operation)])).rowCount ?? 0) > 0;
  }

  async #query(query: Statement, values: unknown[]) {
    try {
      return await this.#prepared.query(this.#pool, query(values));
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      // 42703: a table made before unreachable_since, this code deployed before migrateWatch added it.
      if (code !== '42P01' && code !== '42703') throw error;
      const what = code === '42P01' ? 'does not exist' : 'lacks a column this version needs';
      throw new Error(
        `[@payhook/payments] the watch's table ${what}: run ${this.#table} from @payhook/core/postgres before the first payment is watched.`,
        { cause: error },
      );
    }
  }
}
