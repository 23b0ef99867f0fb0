/**
 * Streams waiting for a channel's next delivery, woken by this instance's appends. Another instance's appends
 * are found by the streams' own polling (`pollMs`).
 */
export class Wakeups {
  readonly #waiting = new Map<string, Set<() => void>>();

  /** Wakes every stream waiting on `channel`. */
  wake(channel: string): void {
    const waiting = this.#waiting.get(channel);
    if (!waiting) return;
    this.#waiting.delete(channel);
    for (const resume of waiting) resume();
  }

  /** Resolves true when woken, false after `ms` or once `signal` aborts. */
  wait(channel: string, ms: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      let waiting = this.#waiting.get(channel);
      if (!waiting) {
        waiting = new Set();
        this.#waiting.set(channel, waiting);
      }
      const set = waiting;
      const done = (woken: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', aborted);
        set.delete(resume);
        if (set.size === 0 && this.#waiting.get(channel) === set) this.#waiting.delete(channel);
        resolve(woken);
      };
      const resume = () => done(true);
      const aborted = () => done(false);
      const timer = setTimeout(() => done(false), ms);
      set.add(resume);
      signal.addEventListener('abort', aborted, { once: true });
    });
  }
}
