/**
 * Delays between tries: `initialMs`, doubled each time up to `maxMs`, with up to 20% random added so that many
 * clients do not retry in step.
 *
 * @example
 * const retry: Backoff = { initialMs: 250, maxMs: 30_000 };
 */
export interface Backoff {
  /** @default 250 */
  initialMs?: number;
  /** @default 30_000 */
  maxMs?: number;
}

/** The delay before try `attempt` (1 for the first retry). */
export function delayFor(backoff: Backoff | undefined, attempt: number): number {
  const initial = backoff?.initialMs ?? 250;
  const max = backoff?.maxMs ?? 30_000;
  const base = Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (1 + Math.random() * 0.2));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
