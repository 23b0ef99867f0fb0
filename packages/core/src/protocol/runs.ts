import { HandlerError, StoreError, WebhookError } from '../errors.js';
import { type Timer, withDeadline } from '../runtime/deadline.js';
import type { DedupeStore } from '../stores/contract.js';
import type { Lease, Run } from './run.js';
import type { StoreCalls } from './store-calls.js';

export interface RunsOptions {
  /** Where the leases live; `undefined` without duplicate detection (nothing to renew). */
  store: DedupeStore | undefined;
  leaseMs: number;
  handlerTimeoutMs: number;
  calls: StoreCalls;
  report(error: WebhookError): void;
}

/** A run still going after this many handler timeouts is given up (a promise that never settles). */
const ABANDON_AFTER_TIMEOUTS = 10;

/**
 * Every run in this process, by key: a copy that arrives meanwhile waits for the run instead of starting it again,
 * even if the store forgot the claim. One timer watches them all: it renews each run's leases every third of
 * `leaseMs`, aborts a run's signal once a lease is lost (renewals failed for `leaseMs`, or the store answered that
 * another claim holds it), answers `handler.timeout` past `handlerTimeoutMs` while the run goes on, and gives up a
 * run still going after ten handler timeouts (a promise that never settles must not hold its notification forever).
 *
 * On Cloudflare Workers (workerd) a timer is a number and dies with the request that set it, so there each run
 * has its own.
 */
export class Runs {
  readonly #options: RunsOptions;
  /*
   * Neither is a Map or a Set: V8 links each table a Map or Set outgrows (or compacts after deletions) to the next,
   * so once one is in the old generation, adding and deleting an entry per run keeps every table since, and every
   * run they held, alive through each young collection into the old generation, until the next full one (a queue
   * worker promoted about 100 KB per scavenge so). An object's dictionary and an array keep no such link.
   */
  /** The runs in progress here by key, each its whole life: a copy of one of them waits for it (`waitFor`). */
  readonly #byKey: Record<string, Promise<unknown>> = Object.create(null);
  /** The runs in progress here, each at its `slot`. */
  readonly #active: Run[] = [];
  readonly #tickMs: number;
  #timer: Timer | undefined;
  /** Set once the first timer turned out to be a number (workerd): then each run has its own. */
  #perRun = false;
  /** Runs whose request still waits for its answer: while there are any, the timer holds the process open. */
  #unanswered = 0;
  /** Who waits for every run to have settled or been given up (`settled`). */
  #idle: (() => void)[] = [];

  constructor(options: RunsOptions) {
    this.#options = options;
    this.#tickMs = Math.max(5, Math.min(1_000, options.leaseMs / 3, options.handlerTimeoutMs / 4));
  }

  /** Waits for this process's own run of `key` to settle; 409 if it is still going at `until`. */
  async waitFor(key: string, until: number): Promise<void> {
    const running = this.#byKey[key];
    if (running === undefined) return;
    const left = until - Date.now();
    if (left <= 0) throw inFlight();
    const settled = running.then(
      () => undefined,
      () => undefined,
    );
    await withDeadline(settled, left, inFlight);
  }

  /**
   * Runs and watches `work`, the run's whole life (handlers, then commit or release). Settles as the work does, or
   * rejects with `handler.timeout` once past its deadline while the work goes on. `handlersLater`: the run's clocks
   * start only at `handlersStart` (a transaction's handlers wait for its connection and claim, which the store's own
   * bound covers).
   */
  track<T>(run: Run, work: () => Promise<T>, handlersLater = false): Promise<T> {
    this.#schedule(run, handlersLater ? Number.POSITIVE_INFINITY : Date.now());
    run.slot = this.#active.push(run) - 1;
    const watched = this.#watch(run);
    if (this.#unanswered++ === 0) hold(this.#timer, true);
    const done = work().finally(() => this.#forget(run));
    run.follow(done, watched);
    if (run.key !== undefined) this.#byKey[run.key] = done;
    const answer = run.answer(done);
    // Like a pending setTimeout, a request waiting for its answer keeps the process alive; a run that goes on after
    // its answer (past handlerTimeoutMs) does not.
    const answered = () => {
      if (--this.#unanswered === 0) hold(this.#timer, false);
    };
    answer.then(answered, answered);
    return answer;
  }

  /** Starts the clocks of a run tracked with `handlersLater`: its handlers start now. */
  handlersStart(run: Run): void {
    this.#schedule(run, Date.now());
  }

  #schedule(run: Run, from: number): void {
    const { handlerTimeoutMs, leaseMs } = this.#options;
    run.schedule(from, handlerTimeoutMs, handlerTimeoutMs * ABANDON_AFTER_TIMEOUTS, leaseMs / 3);
  }

  /** Resolves once no run is going on here: each committed, released or given up (answered or not). */
  settled(): Promise<void> {
    if (this.#active.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Aborts the run's signal and reports, once per run, that its claim (of `fence`) is no longer its own. */
  lose(run: Run, fence: number | undefined): void {
    const error = new StoreError(
      'claim.lost',
      `a claim expired while its handler was still running${fenceOf(fence)} (the store was unreachable for longer than leaseMs, or another copy claimed it): delivery.signal is aborted, and another copy may run the handlers too.`,
    );
    run.abort(error);
    if (run.firstTime('lost')) this.#options.report(error);
  }

  /** Starts the shared timer if none runs; returns the run's own where timers are numbers. */
  #watch(run: Run): Timer | undefined {
    if (this.#timer === undefined && !this.#perRun) {
      this.#timer = setInterval(this.#tick, this.#tickMs);
      if (typeof this.#timer === 'object') hold(this.#timer, false);
      else {
        clearInterval(this.#timer);
        this.#timer = undefined;
        this.#perRun = true;
      }
    }
    return this.#perRun ? setInterval(() => this.#check(run, Date.now()), this.#tickMs) : undefined;
  }

  readonly #tick = (): void => {
    if (this.#active.length === 0 && this.#unanswered === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = Date.now();
    // A copy: a run given up leaves the list while it is walked.
    for (const run of [...this.#active]) this.#check(run, now);
  };

  /** Answers a run past its deadline, gives up one past `abandonAt`, notices lost leases, renews when due. */
  #check(run: Run, now: number): void {
    const { handlerTimeoutMs, leaseMs } = this.#options;
    if (run.awaited && run.pastDeadline(now)) run.refuse(handlerTimeout(handlerTimeoutMs));
    if (run.pastAbandon(now)) {
      this.#forget(run);
      const error = new HandlerError(
        'handler.timeout',
        `a handler has not settled ${ABANDON_AFTER_TIMEOUTS} times handlerTimeoutMs after it started: its claim is no longer renewed and delivery.signal is aborted, so a redelivery will handle the notification again.`,
      );
      run.abort(error);
      this.#options.report(error);
      return;
    }
    const leases = run.leases();
    for (const lease of leases) if (run.expired(lease, now)) this.lose(run, lease.fence);
    if (!run.renewDue(now, leaseMs / 3)) return;
    for (const lease of leases) void this.#renew(run, lease, now);
  }

  #forget(run: Run): void {
    run.stop();
    this.#untrack(run);
    if (run.key !== undefined && this.#byKey[run.key] === run.done) delete this.#byKey[run.key];
    if (this.#active.length === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Whether a run of `key` is going on in this process. */
  has(key: string): boolean {
    return this.#byKey[key] !== undefined;
  }

  /** Takes `run` out of the active list: the last one takes its slot. */
  #untrack(run: Run): void {
    const { slot } = run;
    if (slot === -1) return;
    const last = this.#active.pop()!;
    if (last !== run) {
      this.#active[slot] = last;
      last.slot = slot;
    }
    run.slot = -1;
  }

  /** Renews `lease` through a bounded call; a failure is reported once per run, a lease lost aborts the run. */
  async #renew(run: Run, lease: Lease, askedAt: number): Promise<void> {
    const { store, calls, leaseMs } = this.#options;
    if (store === undefined) return;
    try {
      const held = await calls.call('renew', () => store.renew(lease.key, lease.token, leaseMs));
      if (held) run.renewed(lease, askedAt + leaseMs);
      // A lease committed or released while its renewal was on the way is no longer held, and that is fine.
      else if (run.holds(lease)) this.lose(run, lease.fence);
    } catch (error) {
      if (run.firstTime('renew')) this.#options.report(error as WebhookError);
    }
  }
}

/** ` (fence 3)` when the store counts claims. */
export function fenceOf(fence: number | undefined): string {
  return fence === undefined ? '' : ` (fence ${fence})`;
}

/** Lets a timer hold the process open, or not; workerd's timers (numbers) have no such switch, nor need one. */
function hold(timer: Timer | undefined, on: boolean): void {
  const handle = timer as { ref?: () => void; unref?: () => void } | undefined;
  if (on) handle?.ref?.();
  else handle?.unref?.();
}

function handlerTimeout(ms: number): HandlerError {
  return new HandlerError(
    'handler.timeout',
    `the application handler did not finish within ${ms} ms (handlerTimeoutMs): answered 503 so the service retries; the run goes on and will not be started again while it does.`,
  );
}

/** A copy arriving while another copy of its notification is still being handled. */
export function inFlight(): WebhookError {
  return new WebhookError(
    'notification.in_flight',
    'another copy of this notification is still being handled; retry later.',
  );
}
