import { StoreError } from '@payhook/core';
import { Timeout, withDeadline } from '@payhook/core/adapter';
import type { WatchedPayment, WatchStore } from './contract.js';

type Step = 'add' | 'take' | 'giveBack' | 'remove';

/** What each call was doing, and what its timeout leaves behind. */
const DOING: Record<Step, string> = {
  add: 'registering a payment; a create through the API client is not sent, and a registration that lands later is taken back',
  take: 'taking the overdue payments; the run asked the service nothing (a take that lands later gives its tries back)',
  giveBack:
    'giving back the tries of payments the service could not be asked about; they may have one try counted',
  remove: 'dropping a payment settled, reported or forgotten; it stays watched unless the call lands later',
};

/**
 * The watch's store with every call bounded by `storeTimeoutMs`: a store that never answers (a pool without a
 * connection timeout, a Redis client queueing offline) fails the call with a `StoreError` instead of hanging
 * the run, and every later one joined to it.
 */
export class BoundedWatchStore implements WatchStore {
  readonly #store: WatchStore;
  readonly #timeoutMs: number;

  constructor(store: WatchStore, timeoutMs: number) {
    this.#store = store;
    this.#timeoutMs = timeoutMs;
  }

  get name(): string {
    return this.#store.name;
  }

  /** `late` is called with the answer of an add that lands after its timeout. */
  add(payment: WatchedPayment, late?: (added: boolean) => unknown): Promise<boolean> {
    return this.#bounded('add', () => this.#store.add(payment), late);
  }

  take(now: number, nextDeadline: number, limit: number): Promise<WatchedPayment[]> {
    // Taken after the run gave up on it: nobody asked the service about these, so their try is given back.
    const late = (taken: WatchedPayment[]) => this.#store.giveBack(taken);
    return this.#bounded('take', () => this.#store.take(now, nextDeadline, limit), late);
  }

  giveBack(payments: readonly WatchedPayment[]): Promise<void> {
    return this.#bounded('giveBack', () => this.#store.giveBack(payments));
  }

  /** `late` is called with the answer of a remove that lands after its timeout. */
  remove(orderId: string, operation: string, late?: (removed: boolean) => unknown): Promise<boolean> {
    return this.#bounded('remove', () => this.#store.remove(orderId, operation), late);
  }

  async #bounded<T>(step: Step, call: () => Promise<T>, late?: (value: T) => unknown): Promise<T> {
    const operation = Promise.resolve(call());
    try {
      return await withDeadline(operation, this.#timeoutMs, () => new Timeout('store', this.#timeoutMs));
    } catch (error) {
      if (!(error instanceof Timeout)) throw error;
      if (late) operation.then(late).then(undefined, () => undefined);
      const what = `the payment watch's store (${this.name}) did not answer within ${this.#timeoutMs} ms`;
      throw new StoreError('store.unavailable', `${what} (storeTimeoutMs) when ${DOING[step]}.`, {
        cause: error,
        source: '@payhook/payments',
      });
    }
  }
}
