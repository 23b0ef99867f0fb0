import type { PgQueryable, PgQueryConfig, PgResult } from './postgres-table.js';

// Whether a PostgreSQL store sends named prepared statements, and the fall back to unnamed ones behind a pooler
// that cannot keep them.

/** SQLSTATEs of a named statement the session does not hold, and of one it holds already. */
export const NO_SUCH_STATEMENT = '26000';
export const ALREADY_PREPARED = '42P05';

/** The server refused a named statement as missing or already there: it ran nothing (Parse or Bind failed). */
export function isStatementLost(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === NO_SUCH_STATEMENT || code === ALREADY_PREPARED;
}

/** The warning's code, for `process.on('warning')`. */
const WARNING_CODE = 'PAYHOOK_UNNAMED_STATEMENTS';

/**
 * Named statements (parsed once per connection) until the server shows it cannot keep them: a pooler that runs each
 * transaction on any of its server connections (PgBouncer in transaction mode before 1.21) answers a statement
 * parsed on another connection "does not exist", and one parsed there by another client "already exists". The
 * first such answer turns names off for the store for good, with one warning naming `prepare: false`: the store
 * then answers every delivery, where each would otherwise have had its chance of a 503. Exported for the stores of
 * other payhook packages (the payment watch's).
 *
 * @example
 * const prepared = new Prepared('MyStore', options.prepare);
 * const result = await prepared.query(pool, { name: 'payhook_1f2e', text: 'SELECT 1', values: [] });
 */
export class Prepared {
  readonly #who: string;
  #named: boolean;

  constructor(who: string, prepare = true) {
    this.#who = who;
    this.#named = prepare;
  }

  /** Whether statements are still sent named. */
  get named(): boolean {
    return this.#named;
  }

  /** `config` as it is sent now: without its name once names are off. */
  config(config: PgQueryConfig): PgQueryConfig {
    return this.#named || config.name === undefined ? config : { text: config.text, values: config.values };
  }

  /**
   * One statement outside a transaction: a named one the server refuses as lost ran nothing, so it is sent again,
   * unnamed, after names are turned off.
   */
  query(db: PgQueryable, config: PgQueryConfig): Promise<PgResult> {
    if (!this.#named || config.name === undefined) return db.query(this.config(config));
    return db.query(config).catch((error: unknown) => {
      if (!isStatementLost(error)) throw error;
      this.stop(error);
      return db.query(this.config(config));
    });
  }

  /** Turns names off for good, saying so once. */
  stop(error: unknown): void {
    if (!this.#named) return;
    this.#named = false;
    const said = String((error as { message?: unknown } | null)?.message);
    warn(
      `[@payhook/core] ${this.#who}: PostgreSQL answered "${said}" to a named prepared statement, as it does behind a pooler that runs each transaction on any of its connections (PgBouncer in transaction mode before 1.21, or later without max_prepared_statements). The store sends unnamed statements from now on, that one again first; pass prepare: false to start that way.`,
    );
  }
}

function warn(message: string): void {
  const emit = (globalThis as { process?: { emitWarning?: (m: string, o: object) => void } }).process
    ?.emitWarning;
  if (typeof emit === 'function') emit.call(globalThis.process, message, { code: WARNING_CODE });
  else console.warn(message);
}
