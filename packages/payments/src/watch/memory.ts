import { entryId, removeId, type WatchedPayment, type WatchStore, watchId } from './contract.js';

/**
 * The watch's store in this process's memory: for one instance and for tests (a restart forgets every payment
 * watched; use `RedisWatchStore` or `PostgresWatchStore` to keep them).
 *
 * @example
 * const watch = createPaymentWatch({ api, webhook, store: new MemoryWatchStore() });
 */
export class MemoryWatchStore implements WatchStore {
  readonly name = 'memory';
  readonly #payments = new Map<string, WatchedPayment>();

  /** How many payments are watched. */
  get size(): number {
    return this.#payments.size;
  }

  async add(payment: WatchedPayment): Promise<boolean> {
    const id = watchId(payment.orderId, payment.operation);
    if (this.#payments.has(id)) return false;
    this.#payments.set(id, { ...payment });
    return true;
  }

  async take(now: number, nextDeadline: number, limit: number): Promise<WatchedPayment[]> {
    const due = [...this.#payments.values()]
      .filter((p) => p.deadline <= now)
      .sort((a, b) => a.deadline - b.deadline)
      .slice(0, Math.max(0, Math.floor(limit)));
    return due.map((p) => {
      const { unreachableSince: _, ...kept } = p;
      this.#payments.set(entryId(p.orderId, p.operation), {
        ...kept,
        tries: p.tries + 1,
        deadline: nextDeadline,
      });
      return { ...p, tries: p.tries + 1, deadline: nextDeadline };
    });
  }

  async giveBack(payments: readonly WatchedPayment[]): Promise<void> {
    for (const p of payments) {
      const id = entryId(p.orderId, p.operation);
      const kept = this.#payments.get(id);
      if (kept === undefined) continue;
      const given = [kept.unreachableSince, p.unreachableSince].filter((s) => s !== undefined);
      const since = given.length === 0 ? {} : { unreachableSince: Math.min(...given) };
      this.#payments.set(id, { ...kept, ...since, tries: Math.max(0, kept.tries - 1) });
    }
  }

  async remove(orderId: string, operation: string): Promise<boolean> {
    return this.#payments.delete(removeId(orderId, operation));
  }
}
