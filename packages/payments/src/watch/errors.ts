/** A stable code per way the watch refuses a payment: match on it, never on the message. */
export type WatchErrorCode = 'watch.order_id_invalid' | 'watch.operation_invalid';

/**
 * A payment the watch cannot keep: an order id it could not store or the service could never be asked about
 * (empty, over 256 characters, a control or bidi character, `.` or `..`), or an operation that is not a word (its
 * entry's id would be another order's). Thrown by `register` and by every `WatchStore`, before the store is
 * called; `status` is 400, the request's fault.
 *
 * @example
 * if (error instanceof WatchError && error.code === 'watch.order_id_invalid') return res.status(400).end();
 */
export class WatchError extends Error {
  override readonly name: string = 'WatchError';
  /** Stable: match on it, never on the message. */
  readonly code: WatchErrorCode;
  /** The HTTP status a refusal stands for: 400. */
  readonly status: number = 400;

  constructor(code: WatchErrorCode, message: string) {
    super(`[@payhook/payments] ${message}`);
    this.code = code;
  }
}
