import {
  boundKey,
  type ClaimResult,
  type DedupeStore,
  isTransactionalStore,
  type TransactionalStore,
} from './dedupe.js';
import type { Delivery } from './delivery.js';
import { HandlerError, StoreError, WebhookError } from './errors.js';
import type { Notification } from './notification.js';
import type { Route } from './routes.js';
import { type Run, Runs } from './runs.js';

export interface ExactlyOnceOptions {
  /** `undefined`: no duplicate detection. */
  store: DedupeStore | TransactionalStore | undefined;
  leaseMs: number;
  ttlMs: number;
  inFlightWaitMs: number;
  handlerTimeoutMs: number;
  storeTimeoutMs: number;
  failOpen: boolean;
  report(error: WebhookError): void;
}

/** What a run of a notification's handlers comes to. */
export type Outcome = 'handled' | 'duplicate';

/** One verified notification and the handlers it reaches. */
export interface Job<C> {
  /** The stored key; `undefined` handles it without duplicate detection. */
  readonly key: string | undefined;
  readonly routes: readonly Route<C>[];
  readonly notification: Notification;
  readonly context: C;
  readonly delivery: Delivery;
}

/** How often a copy looks again at a notification another process is handling (ms, then the last one repeats). */
const IN_FLIGHT_DELAYS = [5, 10, 20, 40, 80, 160, 250];

/**
 * The claim / handle / commit protocol: a notification's handlers run once, however many copies arrive, on
 * however many instances.
 *
 * 1. Claim the key (a lease). A duplicate is answered as such; a copy in progress elsewhere is waited for, then
 *    409; a copy in progress in this process is awaited directly, never started again.
 * 2. Run the handlers in order under the lease, renewed while they run. With several handlers each one's
 *    completion is remembered under its own step key, so a redelivery after a failure skips those that succeeded.
 * 3. Commit the key once every handler succeeded; on a failure release it, so the redelivery is handled.
 *
 * A transactional store instead runs every handler inside its transaction with the claim: a failure rolls all
 * their writes back, so the redelivery runs them all again. Past `handlerTimeoutMs` the request answers 503
 * while the run goes on; its lease is renewed until it settles, and then committed or released.
 */
export class ExactlyOnce<C> {
  readonly #options: ExactlyOnceOptions;
  readonly #runs: Runs;

  constructor(options: ExactlyOnceOptions) {
    this.#options = options;
    const store = options.store;
    this.#runs = new Runs({
      store: store === undefined || isTransactionalStore(store) ? undefined : store,
      leaseMs: options.leaseMs,
      handlerTimeoutMs: options.handlerTimeoutMs,
      call: (operation) => this.#call(operation),
      report: options.report,
    });
  }

  /** Runs the job's handlers once; `duplicate` when this notification was already handled. */
  run(job: Job<C>): Outcome | Promise<Outcome> {
    const { store } = this.#options;
    if (store === undefined || job.key === undefined) return this.#unguarded(job, job.key);
    if (isTransactionalStore(store)) return this.#inTransaction(store, job, job.key);
    return this.#atOnce(store, job, job.key);
  }

  /**
   * The common delivery without waiting for anything: a store that answers at once (`MemoryStore`) and one handler
   * that returns without a promise. Nothing else runs meanwhile, so there is no lease to renew, no timeout to
   * watch and no copy to make wait. Whatever returns a promise on the way (the store, the handler, the commit)
   * continues on the general path from where it is.
   */
  #atOnce(store: DedupeStore, job: Job<C>, key: string): Outcome | Promise<Outcome> {
    if (job.routes.length !== 1 || this.#runs.running(key)) return this.#claimed(store, job, key);
    const claim = settle(() => store.claim(key, this.#options.leaseMs));
    if (isPromiseLike(claim) || claim.status === 'in_flight') return this.#claimed(store, job, key, claim);
    if (claim.status === 'duplicate') return 'duplicate';
    const { token } = claim;
    try {
      const result = job.routes[0]!.run(job.notification, job.context, job.delivery);
      // Inside the try: reading `then` runs the application's code too (a getter, a proxy), as `await` would.
      if (isPromiseLike(result)) return this.#handleClaimed(store, job, key, token, result);
    } catch (cause) {
      return this.#released(store, key, token, handlerFailed(cause));
    }
    const commit = settle(() => store.commit(key, token, this.#options.ttlMs));
    if (!isPromiseLike(commit)) return 'handled';
    // Watched as a run, as on the general path: a copy arriving before the commit lands waits for it here, even if
    // the lease runs out meanwhile, instead of claiming again and running the handler a second time.
    return this.#runs.track(key, () => this.#quietly(() => commit)).then(() => 'handled');
  }

  /** Claims (or goes on with `first`, a claim already made), then handles; see the class comment. */
  async #claimed(
    store: DedupeStore,
    job: Job<C>,
    key: string,
    first?: ClaimResult | PromiseLike<ClaimResult>,
  ): Promise<Outcome> {
    let claim: ClaimResult;
    try {
      claim = await this.#claimOrWait(store, key, first);
    } catch (error) {
      if (!this.#failsOpen(error)) throw error;
      this.#options.report(error as StoreError);
      return this.#unguarded(job, key);
    }
    if (claim.status !== 'claimed') return 'duplicate';
    return this.#handleClaimed(store, job, key, claim.token);
  }

  /** Runs the handlers under the claim (or awaits the lone handler already `started`), then commits or releases. */
  async #handleClaimed(
    store: DedupeStore,
    job: Job<C>,
    key: string,
    token: string,
    started?: PromiseLike<unknown>,
  ): Promise<'handled'> {
    await this.#runs.track(key, async (run) => {
      const lease = { key, token };
      run.leases.add(lease);
      try {
        if (started === undefined) await this.#runSteps(store, job, key, run);
        else await started.then(undefined, (cause) => Promise.reject(handlerFailed(cause)));
      } catch (error) {
        run.leases.delete(lease);
        await this.#quietly(() => store.release(key, token));
        throw error;
      }
      run.leases.delete(lease);
      // The work is done: a failing commit must not make the service redeliver it, so it is only reported.
      await this.#quietly(() => store.commit(key, token, this.#options.ttlMs));
    });
    return 'handled';
  }

  /** Releases a claim whose handler failed, then rejects with the failure. */
  async #released(store: DedupeStore, key: string, token: string, failure: WebhookError): Promise<never> {
    await this.#quietly(() => store.release(key, token));
    throw failure;
  }

  /** Runs the handlers in order; with more than one, each under its own step key (see the class comment). */
  async #runSteps(store: DedupeStore, job: Job<C>, key: string, run: Run): Promise<void> {
    if (job.routes.length === 1) return runHandler(job.routes[0]!, job, job.delivery);
    for (const route of job.routes) {
      const stepKey = boundKey(`${key}#${route.id}`);
      const step = await this.#claim(store, stepKey);
      if (step.status === 'duplicate') continue;
      // Only a crashed run leaves a step leased while its notification's lease is free: wait for it to expire.
      if (step.status === 'in_flight') throw inFlight();
      const lease = { key: stepKey, token: step.token };
      run.leases.add(lease);
      try {
        await runHandler(route, job, job.delivery);
      } catch (error) {
        run.leases.delete(lease);
        await this.#quietly(() => store.release(stepKey, step.token));
        throw error;
      }
      run.leases.delete(lease);
      await this.#quietly(() => store.commit(stepKey, step.token, this.#options.ttlMs));
    }
  }

  async #inTransaction(store: TransactionalStore, job: Job<C>, key: string): Promise<Outcome> {
    if (this.#runs.running(key)) await this.#waitForLocalRun(key);
    const outcome = await this.#runs.track(key, async () => {
      let answered = false;
      let started!: () => void;
      const start = new Promise<void>((resolve) => {
        started = resolve;
      });
      // A copy waits for another copy's transaction as long as copies wait with any store, then answers in_flight.
      const options = { lockTimeoutMs: Math.max(1, this.#options.inFlightWaitMs) };
      const transaction = store.transaction(
        key,
        async (tx) => {
          // The store answered after the request was refused (503): roll back, the redelivery handles it.
          if (answered) throw new Error('[@payhook/core] the claim arrived after storeTimeoutMs.');
          started();
          const delivery: Delivery = { ...job.delivery, transaction: tx };
          for (const route of job.routes) await runHandler(route, job, delivery);
        },
        options,
      );
      transaction.catch(() => {});
      // The store's part (connect, BEGIN, claim) may wait for another copy, then has storeTimeoutMs to answer;
      // handlerTimeoutMs bounds the handlers' part.
      try {
        await this.#bounded(Promise.race([start, transaction]), options.lockTimeoutMs);
      } catch (error) {
        answered = true;
        throw error instanceof HandlerError ? error : storeFailure(this.#options, error);
      }
      try {
        return await transaction;
      } catch (error) {
        throw error instanceof HandlerError ? error : storeFailure(this.#options, error);
      }
    });
    if (outcome.status === 'in_flight') throw inFlight();
    return outcome.status === 'duplicate' ? 'duplicate' : 'handled';
  }

  /**
   * `failOpen` runs the handlers without the store only when it failed outright: a store that is merely slow may
   * be serving another copy of this notification, so a timeout stays 503.
   */
  #failsOpen(error: unknown): boolean {
    return this.#options.failOpen && error instanceof StoreError && !(error.cause instanceof StoreTimeout);
  }

  /** Without duplicate detection (`store: false`, no key, or a failed store with `failOpen`). */
  async #unguarded(job: Job<C>, key: string | undefined): Promise<'handled'> {
    if (key !== undefined && this.#runs.running(key)) await this.#waitForLocalRun(key);
    await this.#runs.track(key, async () => {
      for (const route of job.routes) await runHandler(route, job, job.delivery);
    });
    return 'handled';
  }

  /**
   * Claims `key` (the first attempt may be made already); a copy in progress is waited for up to
   * `inFlightWaitMs`, then answered 409.
   */
  async #claimOrWait(
    store: DedupeStore,
    key: string,
    first?: ClaimResult | PromiseLike<ClaimResult>,
  ): Promise<ClaimResult> {
    const waitUntil = Date.now() + this.#options.inFlightWaitMs;
    for (let attempt = 0; ; attempt++) {
      if (this.#runs.running(key)) await this.#waitForLocalRun(key, waitUntil);
      const claim = await this.#claim(store, key, attempt === 0 ? first : undefined);
      if (claim.status !== 'in_flight') return claim;
      const delay = IN_FLIGHT_DELAYS[Math.min(attempt, IN_FLIGHT_DELAYS.length - 1)]!;
      if (Date.now() + delay > waitUntil) throw inFlight();
      await sleep(delay);
    }
  }

  /** Waits for this process's own run of `key` to settle; 409 if it is still going at `until`. */
  async #waitForLocalRun(key: string, until = Date.now() + this.#options.inFlightWaitMs): Promise<void> {
    const running = this.#runs.running(key);
    if (running === undefined) return;
    const left = until - Date.now();
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, left));
    });
    const settled = running.then(
      () => true,
      () => true,
    );
    try {
      if (left <= 0 || !(await Promise.race([settled, gaveUp]))) throw inFlight();
    } finally {
      clearTimeout(timer);
    }
  }

  /** A claim bounded by `storeTimeoutMs`; one that lands after the timeout is released, so it blocks nobody. */
  async #claim(
    store: DedupeStore,
    key: string,
    claim = settle(() => store.claim(key, this.#options.leaseMs)),
  ): Promise<ClaimResult> {
    if (!isPromiseLike(claim)) return claim;
    try {
      return await this.#bounded(claim);
    } catch (error) {
      Promise.resolve(claim)
        .then((late) => (late.status === 'claimed' ? store.release(key, late.token) : undefined))
        .then(undefined, () => undefined);
      throw storeFailure(this.#options, error);
    }
  }

  /** One store call, bounded by `storeTimeoutMs`; any failure is a `StoreError` (503). */
  async #call<T>(operation: () => T | Promise<T>): Promise<T> {
    try {
      const result = operation();
      return isPromiseLike(result) ? await this.#bounded(result) : result;
    } catch (error) {
      throw storeFailure(this.#options, error);
    }
  }

  /** A store call whose failure is reported, not thrown: after the work ran, the answer stays the work's. */
  async #quietly(operation: () => unknown): Promise<void> {
    try {
      await this.#call(operation);
    } catch (error) {
      this.#options.report(error as WebhookError);
    }
  }

  #bounded<T>(operation: PromiseLike<T>, waitMs = 0): Promise<T> {
    const ms = this.#options.storeTimeoutMs + waitMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreTimeout(ms)), ms);
    });
    return Promise.race([operation, timeout]).finally(() => clearTimeout(timer));
  }
}

class StoreTimeout extends Error {
  constructor(ms: number) {
    super(`[@payhook/core] the store did not answer within ${ms} ms (storeTimeoutMs).`);
  }
}

async function runHandler<C>(route: Route<C>, job: Job<C>, delivery: Delivery): Promise<void> {
  try {
    await route.run(job.notification, job.context, delivery);
  } catch (cause) {
    throw handlerFailed(cause);
  }
}

function handlerFailed(cause: unknown): HandlerError {
  return new HandlerError(
    'handler.failed',
    'the application handler failed; the notification was not marked processed and will be handled when redelivered.',
    { cause },
  );
}

/** Calls a store method: its value, its promise, or what it threw as a rejected promise. */
function settle<T>(call: () => T | PromiseLike<T>): T | PromiseLike<T> {
  try {
    return call();
  } catch (error) {
    return Promise.reject(error);
  }
}

function storeFailure(options: ExactlyOnceOptions, cause: unknown): StoreError {
  if (cause instanceof StoreError) return cause;
  const timedOut = cause instanceof StoreTimeout;
  return new StoreError(
    'store.unavailable',
    `the duplicate store (${options.store?.name ?? 'none'}) ${timedOut ? `did not answer within ${options.storeTimeoutMs} ms (storeTimeoutMs)` : 'failed'}; nothing was marked processed, so the service's retry is safe.`,
    { cause },
  );
}

function inFlight(): WebhookError {
  return new WebhookError(
    'notification.in_flight',
    'another copy of this notification is still being handled; retry later.',
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === 'function';
}
