import { WatchError } from './errors.js';

// The contract between the payment watch and its store: what a store keeps per payment, and what the watch calls.

/**
 * One payment the watch waits on: created (or registered) and not yet settled by a final notification.
 *
 * @example
 * const watched: WatchedPayment = { orderId: 'o-1', operation: 'purchase', createdAt, deadline, tries: 0 };
 */
export interface WatchedPayment {
  /** The merchant's `order_id`. */
  readonly orderId: string;
  /** The payment's `method` (`purchase`, `auth`): the operation a notification settles and a re-send asks for. */
  readonly operation: string;
  /** When it was registered, epoch ms. */
  readonly createdAt: number;
  /** When it is overdue (the next try's time once tried), epoch ms. */
  readonly deadline: number;
  /** How many watch runs have taken it so far. */
  readonly tries: number;
  /**
   * Since when every run failed to reach the service's API about it, epoch ms; absent once a run reached it.
   * `take` answers it and clears it, `giveBack` keeps the earlier of the one stored and the one given.
   */
  readonly unreachableSince?: number;
}

/**
 * Where the watch keeps the payments it waits on. `add` keeps an entry already there (a second registration of
 * an order neither resets its deadline nor its tries); `take` atomically takes up to `limit` entries whose
 * deadline is at most `now`, oldest deadline first, counting one more try and moving their deadline to
 * `nextDeadline` and clearing `unreachableSince` (answering the value it had; two runs at once never take one entry
 * twice); `giveBack` undoes the try `take` counted for
 * entries the service could not be asked about; `remove` drops an entry, answering whether it was there. `add` and
 * `remove` refuse what `watchRefusal` refuses (`WatchError`) before touching the store.
 * Implemented by `MemoryWatchStore`, `RedisWatchStore` (`@payhook/core/redis`) and `PostgresWatchStore`
 * (`@payhook/core/postgres`).
 *
 * @example
 * const watch = createPaymentWatch({ api, webhook, store: new MemoryWatchStore() });
 */
export interface WatchStore {
  /** Named in errors and logs. */
  readonly name: string;
  /** `false` when this order and operation is watched already (the first registration is kept). */
  add(payment: WatchedPayment): Promise<boolean>;
  take(now: number, nextDeadline: number, limit: number): Promise<WatchedPayment[]>;
  /**
   * Counts one try less for each payment `take` answered (never below 0), taken again since or not: each call
   * gives back tries a run counted and never used, so the count stays right however takes and gives back
   * interleave (takes queued while the store was offline land together). Its `unreachableSince` is kept as the
   * earlier of the one stored and the one given (none given leaves it: only `take` clears it) when the payment's
   * `deadline` is still the one its take set; taken again since (a later run), the one given is held pending, and
   * kept only once that later take is given back too (it failed as well: whichever of two interleaved runs gives
   * back last, the first failure is kept), dropped by the next take if it never is (the later run reached the
   * service: an older run must not restore the outage clock it cleared; a run that reached the service but could
   * not take its answer gives back with a deadline no entry has, for the same reason). A gone entry (settled) is
   * left alone; the deadline stays.
   */
  giveBack(payments: readonly WatchedPayment[]): Promise<void>;
  remove(orderId: string, operation: string): Promise<boolean>;
}

/** An operation as the watch keeps it: a word (`purchase`, `auth`), so no `:` can make one id another's. */
const OPERATION = /^[A-Za-z0-9_-]{1,32}$/;
/** C0, DEL, C1 and the bidi controls: PostgreSQL refuses NUL (22021), and none belongs in an order id. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** Whether a text holds a C0, DEL, C1 or bidi control character. */
export function hasControlCharacter(text: string): boolean {
  return CONTROL.test(text);
}

/** The service's `order_id` limit (spec 4.1); a longer one would not fit a PostgreSQL index row either. */
const MAX_ORDER_ID = 256;

/**
 * Why an order id and operation cannot be watched, or `undefined` when they can: every store refuses the same
 * entries (`watchId` throws this), and `settle` and `forget` skip them (nothing can be watched under them).
 */
export function watchRefusal(orderId: unknown, operation: unknown): WatchError | undefined {
  return operationRefusal(operation) ?? orderIdRefusal(orderId);
}

function operationRefusal(operation: unknown): WatchError | undefined {
  if (typeof operation !== 'string' || !OPERATION.test(operation)) {
    const what =
      typeof operation === 'string' ? `of ${operation.length} characters` : `of type ${typeof operation}`;
    return new WatchError(
      'watch.operation_invalid',
      `payment watch: an operation ${what} that is not a word (1 to 32 letters, digits, _ or -: purchase, auth) cannot be watched; its entry's id could be another order's.`,
    );
  }
  return undefined;
}

function orderIdRefusal(orderId: unknown): WatchError | undefined {
  const why =
    typeof orderId !== 'string' || orderId === ''
      ? 'is empty or not a string'
      : orderId.length > MAX_ORDER_ID
        ? `has ${orderId.length} characters, over the service's ${MAX_ORDER_ID}`
        : hasControlCharacter(orderId)
          ? 'holds a control or bidi character'
          : orderId === '.' || orderId === '..'
            ? 'is a dot segment, which no request to the service can name'
            : undefined;
  return why === undefined
    ? undefined
    : new WatchError('watch.order_id_invalid', `payment watch: an order id that ${why} cannot be watched.`);
}

/**
 * One entry's identity: the operation is a word (no `:`), so the order id after it may hold anything.
 * @throws {WatchError} what `watchRefusal` finds.
 */
export function watchId(orderId: string, operation: string): string {
  const refusal = watchRefusal(orderId, operation);
  if (refusal) throw refusal;
  return entryId(orderId, operation);
}

/**
 * The id of an entry to remove: its operation checked (a `:` would name another order's entry), its order id not,
 * so an entry a former version kept (a control character in its id) can still be dropped.
 * @throws {WatchError} `watch.operation_invalid`.
 */
export function removeId(orderId: string, operation: string): string {
  const refusal = operationRefusal(operation);
  if (refusal) throw refusal;
  return entryId(orderId, operation);
}

/** The id of an entry a store answered (`take`), unchecked: one a former version kept is given back all the same. */
export function entryId(orderId: string, operation: string): string {
  return `${operation}:${orderId}`;
}

/** Statuses after which the service still has something to say (3.1: `pending` with 2122 waits for 3-D Secure). */
const UNFINISHED = new Set(['init', 'pending', 'processing']);

/** Whether a notification's status settles its payment: any status but `init`, `pending` and `processing`. */
export function isFinalStatus(status: unknown): boolean {
  return typeof status === 'string' && status !== '' && !UNFINISHED.has(status);
}
