import type { JobAttempt } from './engine.js';

/**
 * A job's attempt as a consumer runs it, its signal made only when first read: on Node.js 20 each `AbortSignal`
 * made outlives young collections until a full one (nodejs/node#55328), which one per job made a worker pay on
 * every job, and a run reads its caller's signal only when a handler reads `delivery.signal`.
 */
export class Attempt implements JobAttempt {
  readonly number: number;
  readonly of: number;
  #controller: AbortController | undefined;
  /** Why it was aborted, when it was before its signal was made. */
  #abortedWith: { reason: unknown } | undefined;

  constructor(number: number, of: number) {
    this.number = number;
    this.of = of;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortedWith !== undefined) this.#controller.abort(this.#abortedWith.reason);
    }
    return this.#controller.signal;
  }

  /** Aborts its signal: now if it was made, else as it is made. */
  abort(reason: unknown): void {
    if (this.#controller !== undefined) this.#controller.abort(reason);
    else this.#abortedWith ??= { reason };
  }
}
