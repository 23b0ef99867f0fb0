/** What `setTimeout` and `setInterval` return: an object with `ref`/`unref` on Node.js and Bun, a number in workerd. */
export type Timer = ReturnType<typeof setTimeout>;

/** A call to the store or the queue that did not settle within `storeTimeoutMs`. */
export class Timeout extends Error {
  constructor(what: 'store' | 'queue', ms: number) {
    super(`[@payhook/core] the ${what} did not answer within ${ms} ms (storeTimeoutMs).`);
  }
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * `operation`, or a rejection with the error `late()` returns once `ms` passed; the timer cleared either way. One
 * promise, not a race of two and its `finally`: every store call of a run goes through here.
 */
export function withDeadline<T>(operation: PromiseLike<T>, ms: number, late: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), ms);
    operation.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
