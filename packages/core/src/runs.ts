import type { DedupeStore } from './dedupe.js';
import { HandlerError, StoreError, type WebhookError } from './errors.js';

/** A lease this process holds and must keep alive while its handler runs. */
export interface HeldLease {
  readonly key: string;
  readonly token: string;
}

/** One notification being handled in this process. */
export interface Run {
  /** The leases renewed while it runs: the notification's, and the current handler's step. */
  readonly leases: Set<HeldLease>;
}

interface Entry extends Run {
  readonly key: string | undefined;
  readonly deadline: number;
  /** Past this the run is given up: its leases are no longer renewed and copies no longer wait for it. */
  readonly abandonAt: number;
  renewAt: number;
  /** The run's whole life, as copies wait for it. */
  done: Promise<unknown> | undefined;
  /** Rejects the answer with `handler.timeout`; cleared once used. */
  fail: ((error: WebhookError) => void) | undefined;
  /** The run's own timer, where timers die with the request that set them (see `#watch`). */
  timer: Timer | undefined;
}

/** What `setInterval` returns: an object with `ref` and `unref` on Node.js and Bun, a number in workerd. */
type Timer = ReturnType<typeof setInterval>;

export interface RunsOptions {
  /** Where the leases live; `undefined` without duplicate detection (nothing to renew). */
  store: DedupeStore | undefined;
  leaseMs: number;
  handlerTimeoutMs: number;
  /** Bounds one store call; a renewal that fails is reported, the run goes on. */
  call<T>(operation: () => T | Promise<T>): Promise<T>;
  report(error: WebhookError): void;
}

/** A run still going after this many handler timeouts is given up (a promise that never settles). */
const ABANDON_AFTER_TIMEOUTS = 10;

/**
 * Every notification in progress in this process, by key: a copy that arrives meanwhile waits for the run
 * instead of starting it again, even if the store forgot the claim. One timer watches them all: it renews each
 * run's leases every third of `leaseMs` (so a lease outlives a slow handler, and a crashed process's lease
 * frees after at most `leaseMs`), and answers a run with `handler.timeout` past `handlerTimeoutMs` (the request
 * answers 503 while the handler goes on; its lease stays renewed until it settles). A run still going after ten
 * handler timeouts is given up and reported: a handler whose promise never settles must not hold its
 * notification, and the service's redeliveries, forever.
 *
 * On Cloudflare Workers (workerd) a timer is a number and dies with the request that set it, so a shared timer
 * would stop when its request ends: there each run has its own.
 */
export class Runs {
  readonly #options: RunsOptions;
  readonly #byKey = new Map<string, Promise<unknown>>();
  readonly #active = new Set<Entry>();
  readonly #tickMs: number;
  #timer: Timer | undefined;
  /** Set once the first timer turned out to be a number (workerd): then each run has its own. */
  #perRun = false;
  /** Runs whose request still waits for its answer: while there are any, the timer holds the process open. */
  #unanswered = 0;

  constructor(options: RunsOptions) {
    this.#options = options;
    this.#tickMs = Math.max(5, Math.min(1_000, options.leaseMs / 3, options.handlerTimeoutMs / 4));
  }

  /** The run of `key` still in progress here, if any. */
  running(key: string): Promise<unknown> | undefined {
    return this.#byKey.get(key);
  }

  /**
   * Runs and watches `work(run)`, the run's whole life (handlers, then commit or release). Settles as the work
   * does, or rejects with `handler.timeout` once it is past its deadline while the work goes on.
   */
  track<T>(key: string | undefined, work: (run: Run) => Promise<T>): Promise<T> {
    const now = Date.now();
    const entry: Entry = {
      key,
      leases: new Set(),
      deadline: now + this.#options.handlerTimeoutMs,
      abandonAt: now + this.#options.handlerTimeoutMs * ABANDON_AFTER_TIMEOUTS,
      renewAt: now + this.#options.leaseMs / 3,
      done: undefined,
      fail: undefined,
      timer: undefined,
    };
    this.#active.add(entry);
    this.#watch(entry);
    if (this.#unanswered++ === 0) hold(this.#timer, true);
    const done = work(entry).finally(() => this.#forget(entry));
    entry.done = done;
    if (key !== undefined) this.#byKey.set(key, done);
    const answer = new Promise<T>((resolve, reject) => {
      entry.fail = reject;
      done.then(resolve, reject);
    });
    // Like a pending setTimeout, a request waiting for its answer keeps the process alive; a run that goes on after
    // its answer (past handlerTimeoutMs) does not.
    const answered = () => {
      if (--this.#unanswered === 0) hold(this.#timer, false);
    };
    answer.then(answered, answered);
    return answer;
  }

  /** Starts the shared timer if none runs, or the run's own where timers are numbers. */
  #watch(entry: Entry): void {
    if (this.#timer === undefined && !this.#perRun) {
      this.#timer = setInterval(this.#tick, this.#tickMs);
      if (typeof this.#timer === 'object') hold(this.#timer, false);
      else {
        clearInterval(this.#timer);
        this.#timer = undefined;
        this.#perRun = true;
      }
    }
    if (this.#perRun) entry.timer = setInterval(() => this.#check(entry, Date.now()), this.#tickMs);
  }

  readonly #tick = (): void => {
    if (this.#active.size === 0 && this.#unanswered === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = Date.now();
    for (const entry of this.#active) this.#check(entry, now);
  };

  /** Answers a run past its deadline, gives up one past `abandonAt`, and renews its leases when due. */
  #check(entry: Entry, now: number): void {
    if (entry.fail !== undefined && now >= entry.deadline) {
      entry.fail(handlerTimeout(this.#options.handlerTimeoutMs));
      entry.fail = undefined;
    }
    if (now >= entry.abandonAt) {
      this.#forget(entry);
      this.#options.report(
        new HandlerError(
          'handler.timeout',
          `a handler has not settled ${ABANDON_AFTER_TIMEOUTS} times handlerTimeoutMs after it started: its claim is no longer renewed, so a redelivery will handle the notification again.`,
        ),
      );
    } else if (now >= entry.renewAt) {
      entry.renewAt = now + this.#options.leaseMs / 3;
      for (const lease of entry.leases) void this.#renew(entry, lease);
    }
  }

  /** Stops watching a run: it settled, or it is given up. */
  #forget(entry: Entry): void {
    if (entry.timer !== undefined) clearInterval(entry.timer);
    entry.timer = undefined;
    this.#active.delete(entry);
    entry.leases.clear();
    if (entry.key !== undefined && this.#byKey.get(entry.key) === entry.done) this.#byKey.delete(entry.key);
  }

  /** Renews through the options' bounded call; a store that fails or lost the lease is reported, never thrown. */
  readonly #renew = async (entry: Entry, lease: HeldLease): Promise<void> => {
    const store = this.#options.store;
    if (store === undefined) return;
    try {
      const held = await this.#options.call(() => store.renew(lease.key, lease.token, this.#options.leaseMs));
      // A lease committed or released while its renewal was on the way is no longer held, and that is fine.
      if (!held && entry.leases.has(lease)) {
        this.#options.report(
          new StoreError(
            'store.unavailable',
            'a claim expired while its handler was still running (the store was unreachable for longer than leaseMs): another copy may run it too.',
          ),
        );
      }
    } catch (error) {
      this.#options.report(error as WebhookError);
    }
  };
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
