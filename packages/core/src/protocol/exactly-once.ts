import { handlerTraced, traceHandler } from '../diagnostics/channels.js';
import { HandlerError, StoreError, WebhookError } from '../errors.js';
import type { Notification } from '../notification/types.js';
import { type Clock, sleep } from '../runtime/clock.js';
import { isPromiseLike } from '../runtime/promise.js';
import { type Delivery, type DeliveryFacts, deliveryFor } from './delivery.js';
import {
  boundKey,
  type ClaimResult,
  type DedupeStore,
  isTransactionalStore,
  type TransactionalStore,
  type TransactionResult,
} from './key.js';
import type { Route } from './routes.js';
import { fenceOf, type Lease, Run, Runs } from './runs.js';
import { StoreCalls, StoreTimeout } from './store-calls.js';

/*
 * Glossary, one noun per idea (here, in runs.ts and in store-calls.ts):
 * - notification: what the service sent, verified and parsed.
 * - key: the notification's identity in the store (`notificationKey`, then `boundKey`).
 * - handler: a function registered with `.on` / `.onAny` (a `Route`, with its id). A step is one handler's
 *   completion, stored under `key#id` when a notification reaches several handlers.
 * - work: a notification with the handlers it reaches, the context and the delivery facts: what a run runs.
 * - lease: a key this process holds in the store (token, fence), lost unless renewed within `leaseMs`.
 * - run: this process running one work's handlers, from the claim to the commit or release (`Run`, kept by `Runs`).
 * - delivery: what a handler is told about its run (`Delivery`: key, secret, raw, signal, transaction).
 * - outcome: what a run comes to for its caller: handled, or duplicate.
 */

export interface ExactlyOnceOptions {
  /** `undefined`: no duplicate detection. */
  store: DedupeStore | TransactionalStore | undefined;
  leaseMs: number;
  ttlMs: number;
  inFlightWaitMs: number;
  handlerTimeoutMs: number;
  storeTimeoutMs: number;
  failOpen: boolean;
  clock: Clock;
  report(error: WebhookError): void;
}

/** What a run comes to for its caller. */
export type Outcome = 'handled' | 'duplicate';

/** A notification, the handlers it reaches in order, and what they are told: what a run runs. */
export interface Work<C> {
  /** The stored key; `undefined` handles it without duplicate detection. */
  readonly key: string | undefined;
  readonly handlers: readonly Route<C>[];
  readonly notification: Notification;
  readonly context: C;
  readonly delivery: DeliveryFacts;
  /** The caller's signal (a queue worker's): its abort aborts the handlers' `delivery.signal`. */
  readonly signal?: AbortSignal;
}

/** How often a copy looks again at a notification another process is handling (ms, then the last one repeats). */
const IN_FLIGHT_DELAYS = [5, 10, 20, 40, 80, 160, 250];

/**
 * The claim / run / commit protocol: a notification's handlers run once, however many copies arrive, on however
 * many instances.
 *
 * 1. Claim the key (a lease). A duplicate is answered as such; a copy in progress elsewhere is waited for, then
 *    409; a copy in progress in this process is awaited directly, never started again.
 * 2. Run the handlers in order under the lease, renewed while they run. With several handlers each one's
 *    completion is a step under its own lease, so a redelivery after a failure skips those that succeeded.
 * 3. Commit the key once every handler succeeded (the store refuses the commit of a run that lost its lease:
 *    fencing); on a failure release it, so the redelivery is handled.
 *
 * A transactional store instead runs every handler inside its transaction with the claim: a failure rolls all
 * their writes back, so the redelivery runs them all again. Past `handlerTimeoutMs` the request answers 503
 * while the run goes on; its lease is renewed until it settles, and then committed or released.
 */
export class ExactlyOnce<C> {
  readonly #options: ExactlyOnceOptions;
  readonly #calls: StoreCalls;
  readonly #runs: Runs;

  constructor(options: ExactlyOnceOptions) {
    this.#options = options;
    const { store, clock, report } = options;
    this.#calls = new StoreCalls(store?.name ?? 'none', options.storeTimeoutMs, clock, report);
    this.#runs = new Runs({
      store: store === undefined || isTransactionalStore(store) ? undefined : store,
      leaseMs: options.leaseMs,
      handlerTimeoutMs: options.handlerTimeoutMs,
      calls: this.#calls,
      clock,
      report,
    });
  }

  /** Resolves once no run is going on in this process (each committed, released or given up). */
  settled(): Promise<void> {
    return this.#runs.settled();
  }

  /** Runs the work's handlers once; `duplicate` when this notification was handled already. */
  run(work: Work<C>): Outcome | Promise<Outcome> {
    const { store } = this.#options;
    const key = work.key;
    if (store === undefined || key === undefined) return this.#runUnguarded(work);
    if (isTransactionalStore(store)) return this.#runInTransaction(store, work, key);
    if (work.handlers.length === 1 && !this.#runs.running(key)) return this.#runAtOnce(store, work, key);
    return this.#claimAndRun(store, work, key);
  }

  /**
   * The common delivery without an `await` (`pnpm bench`'s hot path): a store that answers at once (`MemoryStore`)
   * and one handler that returns without a promise need no renewal, no timeout and no copy made to wait. Whatever
   * returns a promise on the way (the claim, the handler, the commit) goes on as a tracked run from where it is.
   */
  #runAtOnce(store: DedupeStore, work: Work<C>, key: string): Outcome | Promise<Outcome> {
    const claim = this.#calls.invoke('claim', () => store.claim(key, this.#options.leaseMs));
    if (isPromiseLike(claim) || claim.status === 'in_flight')
      return this.#claimAndRun(store, work, key, claim);
    if (claim.status === 'duplicate') return 'duplicate';
    const run = new Run(key, work.signal);
    const lease = this.#leaseOf(key, claim);
    try {
      const result = runRoute(work.handlers[0]!, work, deliveryFor(work.delivery, run));
      // Inside the try: reading `then` runs the application's code too (a getter, a proxy), as `await` would.
      if (isPromiseLike(result)) return this.#runUnderLease(store, work, run, lease, result);
    } catch (cause) {
      return this.#releaseAndThrow(store, lease, handlerFailed(cause));
    }
    const committed = this.#calls.invoke('commit', () => store.commit(key, lease.token, this.#options.ttlMs));
    if (isPromiseLike(committed)) {
      // Tracked as a run: a copy arriving before the commit lands waits for it, even past the lease.
      return this.#runs.track(run, () => this.#commit(store, run, lease, committed)).then(() => 'handled');
    }
    if (committed === false) this.#reportStale(run, lease);
    return 'handled';
  }

  /** Claims (or goes on with `first`, a claim already asked for), waiting for a copy in progress; then runs. */
  async #claimAndRun(
    store: DedupeStore,
    work: Work<C>,
    key: string,
    first?: ClaimResult | PromiseLike<ClaimResult>,
  ): Promise<Outcome> {
    let claim: ClaimResult;
    try {
      claim = await this.#claimOrWait(store, key, first);
    } catch (error) {
      if (!this.#failsOpen(error)) throw error;
      this.#options.report(error as StoreError);
      return this.#runUnguarded(work);
    }
    if (claim.status !== 'claimed') return 'duplicate';
    return this.#runUnderLease(store, work, new Run(key, work.signal), this.#leaseOf(key, claim));
  }

  /** Runs the handlers (or awaits the lone handler already `started`) holding the notification's lease. */
  async #runUnderLease(
    store: DedupeStore,
    work: Work<C>,
    run: Run,
    lease: Lease,
    started?: PromiseLike<unknown>,
  ): Promise<'handled'> {
    await this.#runs.track(run, async () => {
      const body = started === undefined ? () => this.#runSteps(store, work, run) : () => settled(started);
      const committed = await this.#withLease(store, run, lease, body);
      if (committed && work.handlers.length > 1) void this.#forgetSteps(store, work);
    });
    return 'handled';
  }

  /**
   * Holds `lease` while `body` runs: renewed with the run, committed when `body` succeeds, released when it throws
   * (the throw goes on). Resolves whether the store recorded the commit.
   */
  async #withLease(store: DedupeStore, run: Run, lease: Lease, body: () => Promise<void>): Promise<boolean> {
    run.leases.add(lease);
    try {
      await body();
    } catch (error) {
      run.leases.delete(lease);
      await this.#calls.quietly('release', () => store.release(lease.key, lease.token));
      throw error;
    }
    run.leases.delete(lease);
    return this.#commit(store, run, lease);
  }

  /** Commits `lease` (`asked`: a commit on its way already). A failure is only reported: the handlers ran. */
  async #commit(
    store: DedupeStore,
    run: Run,
    lease: Lease,
    asked = this.#calls.invoke('commit', () => store.commit(lease.key, lease.token, this.#options.ttlMs)),
  ): Promise<boolean> {
    try {
      const committed = await this.#calls.call('commit', () => asked, true);
      if (committed === false) this.#reportStale(run, lease);
      return committed !== false;
    } catch (error) {
      this.#options.report(error as WebhookError);
      return false;
    }
  }

  /** The handlers in order: one as the notification itself; several each as a step under its own lease. */
  async #runSteps(store: DedupeStore, work: Work<C>, run: Run): Promise<void> {
    const delivery = deliveryFor(work.delivery, run);
    if (work.handlers.length === 1) return runHandler(work.handlers[0]!, work, delivery);
    for (const handler of work.handlers) {
      // A run that lost its lease starts no further handler: another copy may be running them.
      run.throwIfAborted();
      const key = stepKey(work, handler);
      const step = await this.#calls.claim(store, key, this.#options.leaseMs);
      if (step.status === 'duplicate') continue;
      // Only a crashed run leaves a step leased while its notification's lease is free: wait for it to expire.
      if (step.status === 'in_flight') throw inFlight();
      await this.#withLease(store, run, this.#leaseOf(key, step), () => runHandler(handler, work, delivery));
    }
  }

  /** Drops the steps of a committed notification, where the store can: the notification's own key answers now. */
  async #forgetSteps(store: DedupeStore, work: Work<C>): Promise<void> {
    if (store.forget === undefined) return;
    for (const handler of work.handlers) {
      await this.#calls.quietly('forget', () => store.forget!(stepKey(work, handler)));
    }
  }

  /** Says once per run that the store refused its commit (another claim took the key), and starts no more handlers. */
  #reportStale(run: Run, lease: Lease): void {
    const error = new StoreError(
      'claim.lost',
      `the run${fenceOf(lease.fence)} lost the notification to a later claim: the store refused its commit (fencing), so only the run holding the claim records it.`,
    );
    run.abort(error);
    if (run.firstTime('stale')) this.#options.report(error);
  }

  async #releaseAndThrow(store: DedupeStore, lease: Lease, failure: WebhookError): Promise<never> {
    await this.#calls.quietly('release', () => store.release(lease.key, lease.token));
    throw failure;
  }

  async #runInTransaction(store: TransactionalStore, work: Work<C>, key: string): Promise<Outcome> {
    if (this.#runs.running(key)) await this.#waitForLocalRun(key);
    const run = new Run(key, work.signal);
    const result = await this.#runs.track(run, () => this.#transaction(store, work, key, run));
    if (result.status === 'in_flight') throw inFlight();
    return result.status === 'duplicate' ? 'duplicate' : 'handled';
  }

  /**
   * One transaction, bounded in three parts: the store's part until the handlers start (connect, BEGIN, the claim)
   * by `storeTimeoutMs`, and by `inFlightWaitMs` more once the store says it waits on another copy (`onWaiting`);
   * the handlers by `handlerTimeoutMs` (`Runs`); the commit, once they returned, by `storeTimeoutMs`. A claim that
   * arrives after its bound is rolled back; a commit past its bound is answered 503 while it settles (landed: the
   * retry is a duplicate).
   */
  async #transaction(
    store: TransactionalStore,
    work: Work<C>,
    key: string,
    run: Run,
  ): Promise<TransactionResult<void>> {
    const { clock, storeTimeoutMs } = this.#options;
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
    let commitTimer: ReturnType<Clock['setTimeout']> | undefined;
    const transaction = this.#calls.invoke('transaction', () =>
      store.transaction(
        key,
        async (tx) => {
          if (answered) throw new Error('[@payhook/core] the claim arrived after storeTimeoutMs.');
          started();
          await runAll(work, deliveryFor(work.delivery, run, tx));
          const late = this.#calls.failure('transaction', new StoreTimeout(storeTimeoutMs));
          commitTimer = clock.setTimeout(() => run.refuse(late), storeTimeoutMs);
        },
        { lockTimeoutMs, onWaiting, onLost: () => this.#runs.lose(run, undefined) },
      ),
    ) as Promise<TransactionResult<void>>;
    transaction.catch(() => {});
    try {
      await this.#calls.boundedUntilWaiting(Promise.race([start, transaction]), waiting, lockTimeoutMs);
    } catch (error) {
      answered = true;
      throw error instanceof HandlerError ? error : this.#calls.failure('claim', error);
    }
    try {
      return await transaction;
    } catch (error) {
      throw error instanceof HandlerError ? error : this.#calls.failure('transaction', error);
    } finally {
      clock.clearTimeout(commitTimer);
    }
  }

  /**
   * `failOpen` runs the handlers without the store only when it failed outright: a store that is merely slow may
   * be serving another copy of this notification, so a timeout stays 503.
   */
  #failsOpen(error: unknown): boolean {
    return this.#options.failOpen && error instanceof StoreError && !(error.cause instanceof StoreTimeout);
  }

  /** Without duplicate detection (`store: false`, no key, or a failed store with `failOpen`): once at a time here. */
  async #runUnguarded(work: Work<C>): Promise<'handled'> {
    if (work.key !== undefined && this.#runs.running(work.key)) await this.#waitForLocalRun(work.key);
    const run = new Run(work.key, work.signal);
    await this.#runs.track(run, () => runAll(work, deliveryFor(work.delivery, run)));
    return 'handled';
  }

  /**
   * Claims `key` (the first attempt may be asked for already); a copy in progress is waited for up to
   * `inFlightWaitMs`, then answered 409.
   */
  async #claimOrWait(
    store: DedupeStore,
    key: string,
    first?: ClaimResult | PromiseLike<ClaimResult>,
  ): Promise<ClaimResult> {
    const { clock, inFlightWaitMs, leaseMs } = this.#options;
    const waitUntil = clock.now() + inFlightWaitMs;
    for (let attempt = 0; ; attempt++) {
      if (this.#runs.running(key)) await this.#waitForLocalRun(key, waitUntil);
      const claim = await this.#calls.claim(store, key, leaseMs, attempt === 0 ? first : undefined);
      if (claim.status !== 'in_flight') return claim;
      const delay = IN_FLIGHT_DELAYS[Math.min(attempt, IN_FLIGHT_DELAYS.length - 1)]!;
      if (clock.now() + delay > waitUntil) throw inFlight();
      await sleep(clock, delay);
    }
  }

  /** Waits for this process's own run of `key` to settle; 409 if it is still going at `until`. */
  async #waitForLocalRun(
    key: string,
    until = this.#options.clock.now() + this.#options.inFlightWaitMs,
  ): Promise<void> {
    const running = this.#runs.running(key);
    if (running === undefined) return;
    const { clock } = this.#options;
    const left = until - clock.now();
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const gaveUp = new Promise<boolean>((resolve) => {
      timer = clock.setTimeout(() => resolve(false), Math.max(0, left));
    });
    const settledRun = running.then(
      () => true,
      () => true,
    );
    try {
      if (left <= 0 || !(await Promise.race([settledRun, gaveUp]))) throw inFlight();
    } finally {
      clock.clearTimeout(timer);
    }
  }

  #leaseOf(key: string, claim: { readonly token: string; readonly fence?: number }): Lease {
    const heldUntil = this.#options.clock.now() + this.#options.leaseMs;
    return { key, token: claim.token, fence: claim.fence, heldUntil };
  }
}

function stepKey<C>(work: Work<C>, handler: Route<C>): string {
  return boundKey(`${work.key}#${handler.id}`);
}

async function runAll<C>(work: Work<C>, delivery: Delivery): Promise<void> {
  for (const handler of work.handlers) await runHandler(handler, work, delivery);
}

async function runHandler<C>(handler: Route<C>, work: Work<C>, delivery: Delivery): Promise<void> {
  try {
    await runRoute(handler, work, delivery);
  } catch (cause) {
    throw handlerFailed(cause);
  }
}

/** One handler called, traced on `payhook:handler` when anyone listens. */
function runRoute<C>(handler: Route<C>, work: Work<C>, delivery: Delivery): unknown {
  if (!handlerTraced()) return handler.run(work.notification, work.context, delivery);
  return traceHandler(handler.id, work.key, () => handler.run(work.notification, work.context, delivery));
}

/** The lone handler's promise, already started: its failure as `handler.failed`. */
async function settled(started: PromiseLike<unknown>): Promise<void> {
  try {
    await started;
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

function inFlight(): WebhookError {
  return new WebhookError(
    'notification.in_flight',
    'another copy of this notification is still being handled; retry later.',
  );
}
