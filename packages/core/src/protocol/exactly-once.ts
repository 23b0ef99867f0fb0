import { traceStoreCall } from '../diagnostics/channels.js';
import { StoreError, type WebhookError } from '../errors.js';
import { sleep, Timeout } from '../runtime/deadline.js';
import { isPromiseLike } from '../runtime/promise.js';
import {
  type ClaimResult,
  type DedupeStore,
  isTransactionalStore,
  type TransactionalStore,
} from '../stores/contract.js';
import { boundKey } from './key.js';
import {
  deliveryFor,
  handlerFailed,
  lazyDelivery,
  type Outcome,
  type Route,
  runAll,
  runHandler,
  runOf,
  runRoute,
  settledHandler,
  stopRunOf,
  type Work,
} from './routes.js';
import { type Lease, Run } from './run.js';
import { fenceOf, inFlight, Runs } from './runs.js';
import { StoreCalls } from './store-calls.js';
import { Transactional } from './transaction.js';

export type { Outcome, Work } from './routes.js';

/*
 * Glossary, one noun per idea (here, in run.ts, runs.ts and store-calls.ts):
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
  report(error: WebhookError): void;
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
 * A transactional store instead runs every handler inside its transaction with the claim (`Transactional`). Past
 * `handlerTimeoutMs` the request answers 503 while the run goes on; its lease is renewed until it settles, and then
 * committed or released.
 */
export class ExactlyOnce<C> {
  readonly #options: ExactlyOnceOptions;
  readonly #calls: StoreCalls;
  /** The store's name, as traced (`none` without one). */
  readonly #storeName: string;
  readonly #runs: Runs;
  /** The store, unless transactional (then `#transactional` holds it); `undefined` without duplicate detection. */
  readonly #dedupe: DedupeStore | undefined;
  readonly #transactional: Transactional | undefined;

  constructor(options: ExactlyOnceOptions) {
    this.#options = options;
    const { store, report } = options;
    const transactional = store !== undefined && isTransactionalStore(store);
    this.#dedupe = transactional ? undefined : (store as DedupeStore | undefined);
    this.#storeName = store?.name ?? 'none';
    this.#calls = new StoreCalls(this.#storeName, options.storeTimeoutMs, report);
    this.#runs = new Runs({
      store: this.#dedupe,
      leaseMs: options.leaseMs,
      handlerTimeoutMs: options.handlerTimeoutMs,
      calls: this.#calls,
      report,
    });
    this.#transactional = transactional
      ? new Transactional(store as TransactionalStore, this.#calls, this.#runs, options)
      : undefined;
  }

  get transactional(): boolean {
    return this.#transactional !== undefined;
  }

  /** Resolves once no run is going on in this process (each committed, released or given up). */
  settled(): Promise<void> {
    return this.#runs.settled();
  }

  /** Runs the work's handlers once; `duplicate` when this notification was handled already. */
  run(work: Work<C>): Outcome | Promise<Outcome> {
    const { key } = work;
    if (key !== undefined && this.#transactional) return this.#transactional.run(work, key);
    const store = this.#dedupe;
    if (store === undefined || key === undefined) return this.#runUnguarded(work);
    if (work.handlers.length === 1 && !this.#runs.has(key)) return this.#runAtOnce(store, work, key);
    return this.#claimAndRun(store, work, key);
  }

  /**
   * The common delivery without an `await` (`pnpm bench`'s hot path): a store that answers at once (`MemoryStore`)
   * and one handler that returns without a promise need no renewal, no timeout and no copy made to wait. Whatever
   * returns a promise on the way (the claim, the handler, the commit) goes on as a tracked run from where it is.
   */
  #runAtOnce(store: DedupeStore, work: Work<C>, key: string): Outcome | Promise<Outcome> {
    const { leaseMs, ttlMs } = this.#options;
    const claim = traceStoreCall('claim', this.#storeName, () => store.claim(key, leaseMs));
    // A claim answered at once has a status; a promise (or any thenable) has none and goes on as a tracked run.
    const { status } = claim as Partial<ClaimResult>;
    if (status === 'duplicate') return 'duplicate';
    if (status !== 'claimed') return this.#claimAndRun(store, work, key, claim);
    const claimed = claim as Extract<ClaimResult, { status: 'claimed' }>;
    const { token, fence } = claimed;
    const delivery = lazyDelivery(work.delivery, work.caller);
    try {
      const result = runRoute(work.handlers[0]!, work, delivery);
      // Inside the try: reading `then` runs the application's code too (a getter, a proxy), as `await` would.
      if (isPromiseLike(result)) {
        return this.#runUnderLease(store, work, runOf(delivery), this.#leaseOf(key, claimed), result);
      }
    } catch (cause) {
      stopRunOf(delivery);
      return this.#releaseAndThrow(store, this.#leaseOf(key, claimed), handlerFailed(cause));
    }
    const committed = traceStoreCall('commit', this.#storeName, () => store.commit(key, token, ttlMs));
    if (committed === true) {
      stopRunOf(delivery);
      return 'handled';
    }
    const run = runOf(delivery);
    if (committed === false) {
      this.#reportStale(run, { key, token, fence, heldUntil: 0 });
      run.stop();
      return 'handled';
    }
    // Tracked as a run: a copy arriving before the commit lands waits for it, even past the lease.
    const lease = this.#leaseOf(key, claimed);
    return this.#runs.track(run, () => this.#commit(store, run, lease, committed)).then(() => 'handled');
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
    return this.#runUnderLease(store, work, new Run(key, work.caller), this.#leaseOf(key, claim));
  }

  async #runUnderLease(
    store: DedupeStore,
    work: Work<C>,
    run: Run,
    lease: Lease,
    started?: PromiseLike<unknown>,
  ): Promise<'handled'> {
    await this.#runs.track(run, async () => {
      const body =
        started === undefined ? () => this.#runSteps(store, work, run) : () => settledHandler(started);
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
    run.hold(lease);
    try {
      await body();
    } catch (error) {
      run.drop(lease);
      await this.#calls.quietly('release', () => store.release(lease.key, lease.token));
      throw error;
    }
    run.drop(lease);
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

  /**
   * `failOpen` runs the handlers without the store only when it failed outright: a store that is merely slow may
   * be serving another copy of this notification, so a timeout stays 503.
   */
  #failsOpen(error: unknown): boolean {
    return this.#options.failOpen && error instanceof StoreError && !(error.cause instanceof Timeout);
  }

  /** Without duplicate detection (`store: false`, no key, or a failed store with `failOpen`): once at a time here. */
  async #runUnguarded(work: Work<C>): Promise<'handled'> {
    if (work.key !== undefined && this.#runs.has(work.key)) await this.#waitForLocalRun(work.key);
    const run = new Run(work.key, work.caller);
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
    const { inFlightWaitMs, leaseMs } = this.#options;
    const waitUntil = Date.now() + inFlightWaitMs;
    for (let attempt = 0; ; attempt++) {
      if (this.#runs.has(key)) await this.#waitForLocalRun(key, waitUntil);
      const claim = await this.#calls.claim(store, key, leaseMs, attempt === 0 ? first : undefined);
      if (claim.status !== 'in_flight') return claim;
      const delay = IN_FLIGHT_DELAYS[Math.min(attempt, IN_FLIGHT_DELAYS.length - 1)]!;
      if (Date.now() + delay > waitUntil) throw inFlight();
      await sleep(delay);
    }
  }

  #waitForLocalRun(key: string, until = Date.now() + this.#options.inFlightWaitMs): Promise<void> {
    return this.#runs.waitFor(key, until);
  }

  #leaseOf(key: string, claim: { readonly token: string; readonly fence?: number }): Lease {
    const heldUntil = Date.now() + this.#options.leaseMs;
    return { key, token: claim.token, fence: claim.fence, heldUntil };
  }
}

function stepKey<C>(work: Work<C>, handler: Route<C>): string {
  return boundKey(`${work.key}#${handler.id}`);
}
