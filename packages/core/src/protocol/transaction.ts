import { WebhookError } from '../errors.js';
import { Timeout } from '../runtime/deadline.js';
import type { TransactionalStore, TransactionResult } from '../stores/contract.js';
import { boundKey } from './key.js';
import { deliveryFor, type Outcome, runAll, type Work } from './routes.js';
import { Run } from './run.js';
import { inFlight, type Runs } from './runs.js';
import type { StoreCalls } from './store-calls.js';

/** What `#recorded`'s transaction throws to roll back: the key was not recorded. */
const NOT_RECORDED = Symbol('not recorded');

export interface TransactionalOptions {
  storeTimeoutMs: number;
  inFlightWaitMs: number;
}

/**
 * The protocol with a transactional store (`PostgresInbox`): every handler runs inside the store's transaction with
 * the claim, so a failure rolls all their writes back and the redelivery runs them all again; the commit is the
 * notification's and the handlers' at once. A copy in progress in this process is awaited first, as without one.
 */
export class Transactional {
  readonly #store: TransactionalStore;
  readonly #calls: StoreCalls;
  readonly #runs: Runs;
  readonly #options: TransactionalOptions;

  constructor(store: TransactionalStore, calls: StoreCalls, runs: Runs, options: TransactionalOptions) {
    this.#store = store;
    this.#calls = calls;
    this.#runs = runs;
    this.#options = options;
  }

  async run<C>(work: Work<C>, key: string): Promise<Outcome> {
    if (work.steps && work.handlers.length > 1) return this.#runSteps(work, key);
    if (this.#runs.has(key)) await this.#runs.waitFor(key, Date.now() + this.#options.inFlightWaitMs);
    const run = new Run(key, work.caller);
    const result = await this.#runs.track(run, () => this.#transaction(work, key, run), true);
    if (result.status === 'in_flight') throw inFlight();
    return result.status === 'duplicate' ? 'duplicate' : 'handled';
  }

  /**
   * The queued handlers, as the other stores run them: each in a transaction of its own under `key#id`, committed
   * with its completion (a retry skips it: `duplicate`), then the notification's key in one more transaction. The
   * key is looked at first, so a notification recorded before (by an earlier version, in one transaction) is a
   * duplicate, and its steps are never run again.
   */
  async #runSteps<C>(work: Work<C>, key: string): Promise<Outcome> {
    if (await this.#recorded(key)) return 'duplicate';
    let ran = false;
    for (const handler of work.handlers) {
      const step: Work<C> = { ...work, handlers: [handler], steps: false, within: undefined };
      if ((await this.run(step, boundKey(`${key}#${handler.id}`))) === 'handled') ran = true;
    }
    const recorded = await this.run({ ...work, handlers: [], steps: false, within: undefined }, key);
    return ran || recorded === 'handled' ? 'handled' : 'duplicate';
  }

  /**
   * Whether the store recorded `key`: a transaction that runs nothing and rolls back, unless the key is a
   * duplicate. Another copy holding it answers 409 `notification.in_flight`, as a claim would.
   */
  async #recorded(key: string): Promise<boolean> {
    const lockTimeoutMs = Math.max(1, this.#options.inFlightWaitMs);
    const looking = this.#calls.invoke('claim', () =>
      this.#store.transaction(key, () => Promise.reject(NOT_RECORDED), { lockTimeoutMs }),
    );
    let result: TransactionResult<never>;
    try {
      result = await this.#calls.bounded(Promise.resolve(looking), lockTimeoutMs);
    } catch (error) {
      if (error === NOT_RECORDED) return false;
      throw this.#calls.failure('claim', error);
    }
    if (result.status === 'in_flight') throw inFlight();
    return result.status === 'duplicate';
  }

  /**
   * One transaction, bounded in three parts: the store's part until the handlers start (connect, BEGIN, the claim)
   * by `storeTimeoutMs`, and by `inFlightWaitMs` more once the store says it waits on another copy (`onWaiting`);
   * the handlers by `handlerTimeoutMs` (`Runs`); the commit, once they returned, by `storeTimeoutMs`. A claim that
   * arrives after its bound is rolled back; a commit past its bound is answered 503 while it settles (landed: the
   * retry is a duplicate).
   */
  async #transaction<C>(work: Work<C>, key: string, run: Run): Promise<TransactionResult<void>> {
    const { storeTimeoutMs } = this.#options;
    const lockTimeoutMs = Math.max(1, this.#options.inFlightWaitMs);
    let answered = false;
    let started!: () => void;
    const start = new Promise<void>((resolve) => {
      started = resolve;
    });
    let onWaiting!: () => void;
    const waiting = new Promise<void>((resolve) => {
      onWaiting = resolve;
    });
    let commitTimer: ReturnType<typeof setTimeout> | undefined;
    const transaction = this.#calls.invoke('transaction', () =>
      this.#store.transaction(
        key,
        async (tx) => {
          if (answered) throw new Error('[@payhook/core] the claim arrived after storeTimeoutMs.');
          started();
          this.#runs.handlersStart(run);
          await runAll(work, deliveryFor(work.delivery, run, tx));
          if (work.within) await work.within(tx);
          const late = this.#calls.failure('transaction', new Timeout('store', storeTimeoutMs));
          commitTimer = setTimeout(() => run.refuse(late), storeTimeoutMs);
        },
        { lockTimeoutMs, onWaiting, onLost: () => this.#runs.lose(run, undefined) },
      ),
    ) as Promise<TransactionResult<void>>;
    transaction.catch(() => {});
    try {
      await this.#calls.boundedUntilWaiting(Promise.race([start, transaction]), waiting, lockTimeoutMs);
    } catch (error) {
      answered = true;
      throw error instanceof WebhookError ? error : this.#calls.failure('claim', error);
    }
    try {
      return await transaction;
    } catch (error) {
      // A handler's failure, or the outbox's (`queue.unavailable`), as it is: the transaction rolled back.
      throw error instanceof WebhookError ? error : this.#calls.failure('transaction', error);
    } finally {
      clearTimeout(commitTimer);
    }
  }
}
