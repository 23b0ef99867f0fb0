import type { WebhookError } from '../errors.js';
import type { Timer } from '../runtime/deadline.js';
import type { Caller } from './delivery.js';

/** A key this process holds in the store (the notification's, or a step's), as `claim` granted it. */
export interface Lease {
  readonly key: string;
  readonly token: string;
  /** Grows with every claim of the key; `undefined` from a store that does not count. */
  readonly fence: number | undefined;
  /** Until when the store holds it, as far as this process knows when claimed: the claim plus `leaseMs`. */
  readonly heldUntil: number;
}

/** What a run reports at most once, however often it happens: a lost lease, a refused commit, a failed renewal. */
const MISHAP = { lost: 1, stale: 2, renew: 4 } as const;
type Mishap = keyof typeof MISHAP;

/** One notification's handlers running in this process, from the claim to the commit or release. */
export class Run {
  readonly key: string | undefined;
  /** Its index in `Runs`' active list while tracked, -1 otherwise. */
  slot = -1;
  /** The leases renewed while it runs (the notification's, and the current handler's step), to until when held. */
  readonly #leases = new Map<Lease, number>();
  /** When the answer turns into `handler.timeout`, when the run is given up, when its leases are renewed next. */
  #deadline = 0;
  #abandonAt = 0;
  #renewAt = 0;
  /** The run's whole life, as copies wait for it. */
  #done: Promise<unknown> | undefined;
  /** The run's own timer, where timers die with the request that set them (see `Runs#watch`). */
  #timer: Timer | undefined;
  #refuse: ((error: WebhookError) => void) | undefined;
  #controller: AbortController | undefined;
  /** Where the caller's signal is (a queue worker's, aborted when it hands the job back), until the run stops. */
  #caller: Caller | undefined;
  /** The caller's signal the run follows (once its own was made), and how. */
  #followed: AbortSignal | undefined;
  #onCallerAbort: (() => void) | undefined;
  #reported = 0;

  constructor(key: string | undefined, caller?: Caller) {
    this.key = key;
    this.#caller = caller;
  }

  /**
   * Aborted when the run lost its lease or was given up, or when the caller's signal aborts: its handlers may no
   * longer be alone. Made when first read; only then does the run read the caller's signal and listen to it, until
   * `stop`.
   */
  get signal(): AbortSignal {
    return this.#own().signal;
  }

  /** Throws why the run was aborted, if it was: a handler not yet started must not start. */
  throwIfAborted(): void {
    (this.#controller?.signal ?? this.#caller?.signal)?.throwIfAborted();
  }

  abort(reason: unknown): void {
    const controller = this.#own();
    if (!controller.signal.aborted) controller.abort(reason);
  }

  #own(): AbortController {
    if (this.#controller !== undefined) return this.#controller;
    const controller = new AbortController();
    this.#controller = controller;
    const caller = this.#caller?.signal;
    if (caller?.aborted) controller.abort(caller.reason);
    else if (caller !== undefined) {
      // One signal may serve many runs (a worker's, a shutdown's): each run lets go of it when it stops.
      this.#onCallerAbort = () => this.abort(caller.reason);
      this.#followed = caller;
      caller.addEventListener('abort', this.#onCallerAbort, { once: true });
    }
    return controller;
  }

  firstTime(mishap: Mishap): boolean {
    if ((this.#reported & MISHAP[mishap]) !== 0) return false;
    this.#reported |= MISHAP[mishap];
    return true;
  }

  hold(lease: Lease): void {
    this.#leases.set(lease, lease.heldUntil);
  }

  drop(lease: Lease): void {
    this.#leases.delete(lease);
  }

  /** Records a renewal of `lease`, unless it was committed or released while the renewal was on its way. */
  renewed(lease: Lease, heldUntil: number): void {
    if (this.#leases.has(lease)) this.#leases.set(lease, heldUntil);
  }

  /** Whether the run still holds `lease` (a renewal that finds it committed or released is no loss). */
  holds(lease: Lease): boolean {
    return this.#leases.has(lease);
  }

  /** Its leases (while tracked): a copy, so renewing or losing one while iterating is safe. */
  leases(): Lease[] {
    return [...this.#leases.keys()];
  }

  expired(lease: Lease, now: number): boolean {
    return now >= (this.#leases.get(lease) ?? Number.POSITIVE_INFINITY);
  }

  /** Starts the run's clocks at `now`: its answer's deadline, when it is given up, its first renewal. */
  schedule(now: number, timeoutMs: number, abandonAfterMs: number, renewEveryMs: number): void {
    this.#deadline = now + timeoutMs;
    this.#abandonAt = now + abandonAfterMs;
    this.#renewAt = now + renewEveryMs;
  }

  pastDeadline(now: number): boolean {
    return now >= this.#deadline;
  }

  pastAbandon(now: number): boolean {
    return now >= this.#abandonAt;
  }

  /** True when a renewal is due at `now`; the next one is then `renewEveryMs` later. */
  renewDue(now: number, renewEveryMs: number): boolean {
    if (now < this.#renewAt) return false;
    this.#renewAt = now + renewEveryMs;
    return true;
  }

  /** The run's whole life, once tracked; `watched`: its own timer (workerd). */
  follow(done: Promise<unknown>, watched: Timer | undefined): void {
    this.#done = done;
    this.#timer = watched;
  }

  get done(): Promise<unknown> | undefined {
    return this.#done;
  }

  /** Stops its own timer, lets its leases and the caller's signal go: it settled, or it is given up. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#leases.clear();
    if (this.#onCallerAbort !== undefined) this.#followed?.removeEventListener('abort', this.#onCallerAbort);
    this.#onCallerAbort = undefined;
    this.#followed = undefined;
    // A stopped run's signal, made or aborted later (a run given up is aborted after it stops), follows no caller.
    this.#caller = undefined;
  }

  /** The answer to wait for: the work's own, unless `refuse` answered it first. */
  answer<T>(done: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#refuse = reject;
      done.then(resolve, reject);
    });
  }

  get awaited(): boolean {
    return this.#refuse !== undefined;
  }

  /** Answers with `error` now while the work goes on (a timeout); only the first refusal counts. */
  refuse(error: WebhookError): void {
    this.#refuse?.(error);
    this.#refuse = undefined;
  }
}
