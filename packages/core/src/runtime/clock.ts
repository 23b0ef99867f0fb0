/** What `setTimeout` and `setInterval` return: an object with `ref`/`unref` on Node.js and Bun, a number in workerd. */
export type Timer = ReturnType<typeof setTimeout>;

/** The time and timers the exactly-once protocol reads: the system's, or a test's fake. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): Timer;
  clearTimeout(timer: Timer | undefined): void;
  setInterval(callback: () => void, ms: number): Timer;
  clearInterval(timer: Timer | undefined): void;
}

/** The system clock, read at each call: vitest's fake timers and a runtime's own timers apply as they are installed. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer),
  setInterval: (callback, ms) => setInterval(callback, ms),
  clearInterval: (timer) => clearInterval(timer),
};

export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

/** `operation`, or a rejection with the error `late()` returns once `ms` passed on `clock`; the timer cleared either way. */
export function withDeadline<T>(
  operation: PromiseLike<T>,
  ms: number,
  clock: Clock,
  late: () => Error,
): Promise<T> {
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => reject(late()), ms);
  });
  return Promise.race([operation, timeout]).finally(() => clock.clearTimeout(timer));
}
