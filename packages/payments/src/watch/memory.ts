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
  readonly #payments = new Map<string, Kept>();

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
    return due.map(({ pendingSince: _pending, ...p }) => {
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
      const { unreachableSince, pendingSince, ...rest } = kept;
      const tries = Math.max(0, kept.tries - 1);
      if (p.deadline !== kept.deadline) {
        // Taken again since: held back until that later take is given back too (see WatchStore.giveBack).
        const pending = earliest(pendingSince, p.unreachableSince);
        this.#payments.set(id, { ...rest, ...since(unreachableSince), ...pendingOf(pending), tries });
        continue;
      }
      const first = earliest(unreachableSince, pendingSince, p.unreachableSince);
      this.#payments.set(id, { ...rest, ...since(first), tries });
    }
  }

  async remove(orderId: string, operation: string): Promise<boolean> {
    return this.#payments.delete(removeId(orderId, operation));
  }
}

/** An entry as kept: with the earliest `unreachableSince` a run that took it before a later take gave back. */
type Kept = WatchedPayment & { readonly pendingSince?: number };

function earliest(...times: (number | undefined)[]): number | undefined {
  const given = times.filter((t) => t !== undefined);
  return given.length === 0 ? undefined : Math.min(...given);
}

const since = (time: number | undefined) => (time === undefined ? {} : { unreachableSince: time });
const pendingOf = (time: number | undefined) => (time === undefined ? {} : { pendingSince: time });
