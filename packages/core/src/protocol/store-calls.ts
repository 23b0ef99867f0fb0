import { traceStoreCall } from '../diagnostics/channels.js';
import type { StoreStep } from '../diagnostics/messages.js';
import { StoreError, type WebhookError } from '../errors.js';
import { Timeout, withDeadline } from '../runtime/deadline.js';
import { isPromiseLike } from '../runtime/promise.js';
import type { ClaimResult, DedupeStore } from '../stores/contract.js';

export type { StoreStep };

/** The end of a failure's message at each step: what was being done, and what the failure leaves behind. */
const AFTERMATH: Record<StoreStep, string> = {
  claim: "; nothing was marked processed, so the service's retry is safe.",
  renew:
    ' when renewing the claim of a running handler; the run goes on, and if the store stays unreachable past leaseMs another copy may run the handlers too.',
  commit: " when recording the handlers' success; if it was not recorded, a redelivery runs them again.",
  release:
    ' when releasing the claim of a failed handler; the claim expires after leaseMs, then a redelivery is handled.',
  forget: " when dropping a committed notification's handler completions; they stay stored until their TTL.",
  transaction:
    ' when committing the transaction after the handlers finished; if the commit landed the retry is answered duplicate, if not the handlers run again.',
};

/**
 * Every call the protocol makes to the store, bounded by `storeTimeoutMs`: a failure or a timeout becomes a
 * `StoreError` (503 `store.unavailable`) whose message says what it leaves behind.
 */
export class StoreCalls {
  readonly #name: string;
  readonly #timeoutMs: number;
  readonly #report: (error: WebhookError) => void;

  constructor(name: string, timeoutMs: number, report: (error: WebhookError) => void) {
    this.#name = name;
    this.#timeoutMs = timeoutMs;
    this.#report = report;
  }

  /** `operation`, rejected with a `Timeout` after `storeTimeoutMs` plus `waitMs` (a lock the store may wait on). */
  bounded<T>(operation: PromiseLike<T>, waitMs = 0): Promise<T> {
    const ms = this.#timeoutMs + waitMs;
    return withDeadline(operation, ms, () => new Timeout('store', ms));
  }

  /**
   * `operation` bounded by `storeTimeoutMs` until `waiting` resolves (the store says it waits on a concurrent copy),
   * then by `waitMs` more from there: only that wait may take longer than any other store call.
   */
  async boundedUntilWaiting<T>(
    operation: PromiseLike<T>,
    waiting: PromiseLike<void>,
    waitMs: number,
  ): Promise<T> {
    const waited = Symbol('waiting');
    const first = await this.bounded(Promise.race([operation, Promise.resolve(waiting).then(() => waited)]));
    return first === waited ? this.bounded(operation, waitMs) : (first as T);
  }

  /** Every store call goes through here once (`call` and `claim` too, unless given a call already made). */
  invoke<T>(step: StoreStep, operation: () => T | PromiseLike<T>): T | PromiseLike<T> {
    return traceStoreCall(step, this.#name, operation);
  }

  /** One bounded store call (`invoked`: `operation` answers a call already made); any failure is a `StoreError`. */
  async call<T>(step: StoreStep, operation: () => T | PromiseLike<T>, invoked = false): Promise<T> {
    try {
      const result = invoked ? operation() : this.invoke(step, operation);
      return isPromiseLike(result) ? await this.bounded(result) : result;
    } catch (error) {
      throw this.failure(step, error);
    }
  }

  /** A store call whose failure is reported, not thrown: after the handlers ran, the answer stays theirs. */
  async quietly<T>(step: StoreStep, operation: () => T | PromiseLike<T>): Promise<T | undefined> {
    try {
      return await this.call(step, operation);
    } catch (error) {
      this.#report(error as WebhookError);
      return undefined;
    }
  }

  /** A bounded claim (`first`: one already asked for); one that lands after the timeout is released, so it blocks nobody. */
  async claim(
    store: DedupeStore,
    key: string,
    leaseMs: number,
    first: ClaimResult | PromiseLike<ClaimResult> = this.invoke('claim', () => store.claim(key, leaseMs)),
  ): Promise<ClaimResult> {
    if (!isPromiseLike(first)) return first;
    try {
      return await this.bounded(first);
    } catch (error) {
      Promise.resolve(first)
        .then((late) => (late.status === 'claimed' ? store.release(key, late.token) : undefined))
        .then(undefined, () => undefined);
      throw this.failure('claim', error);
    }
  }

  failure(step: StoreStep, cause: unknown): StoreError {
    if (cause instanceof StoreError) return cause;
    const what =
      cause instanceof Timeout ? `did not answer within ${this.#timeoutMs} ms (storeTimeoutMs)` : 'failed';
    return new StoreError(
      'store.unavailable',
      `the duplicate store (${this.#name}) ${what}${AFTERMATH[step]}`,
      {
        cause,
      },
    );
  }
}
