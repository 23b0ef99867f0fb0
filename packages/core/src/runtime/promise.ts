/**
 * Whether `value` is a promise or any thenable: the one test core uses to await a step only when it must, since
 * each `await` of a plain value costs a turn of the microtask queue.
 */
export function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null | undefined)?.then === 'function';
}
