// The contract between the payment ledger and its store: each payment's log of facts, appended atomically.
import type { LedgerFact } from './fact.js';

/**
 * What `append` answers: the payment's whole log as the store holds it once the fact is in, and the fact's position
 * in it (where it was already, for a key recorded before).
 *
 * @example
 * const { log, at } = await store.append('order-1', fact);
 */
export interface Appended {
  readonly log: readonly LedgerFact[];
  readonly at: number;
}

/**
 * Where the ledger keeps each payment's log. `append` is atomic per payment: of concurrent appends to one payment,
 * each sees the log with every fact appended before it, in one order all readers share; a fact whose key (`k`) the
 * log holds already is not appended again, and its position is answered. With `transaction` (the handler's
 * `PostgresInbox` transaction) a store that can writes within it, so the fact commits or rolls back with the claim.
 * Implemented by `MemoryLedgerStore`, `RedisLedgerStore` (`@payhook/payments/redis`) and `PostgresLedgerStore`
 * (`@payhook/payments/postgres`).
 *
 * @example
 * const ledger = createPaymentLedger({ store: new MemoryLedgerStore() });
 */
export interface LedgerStore {
  /** Named in errors. */
  readonly name: string;
  append(orderId: string, fact: LedgerFact, transaction?: unknown): Promise<Appended>;
  /** The payment's log, empty for a payment never recorded. */
  read(orderId: string): Promise<readonly LedgerFact[]>;
}
