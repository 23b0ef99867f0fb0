import type { Appended, LedgerStore } from './contract.js';
import type { LedgerFact } from './fact.js';

/**
 * The ledger's store in this process's memory: for one instance and for tests (a restart forgets every payment;
 * use `RedisLedgerStore` or `PostgresLedgerStore` to keep them and share them between instances).
 *
 * @example
 * const ledger = createPaymentLedger({ store: new MemoryLedgerStore() });
 */
export class MemoryLedgerStore implements LedgerStore {
  readonly name = 'memory';
  readonly #logs = new Map<string, LedgerFact[]>();

  /** How many payments are kept. */
  get size(): number {
    return this.#logs.size;
  }

  async append(orderId: string, fact: LedgerFact): Promise<Appended> {
    const log = this.#logs.get(orderId) ?? [];
    this.#logs.set(orderId, log);
    let at = log.findIndex((kept) => kept.k === fact.k);
    if (at < 0) at = log.push(fact) - 1;
    return { log: [...log], at };
  }

  async read(orderId: string): Promise<readonly LedgerFact[]> {
    return [...(this.#logs.get(orderId) ?? [])];
  }
}
