import { PayloadError } from '../errors.js';
import { decodeBase64UrlText } from '../runtime/bytes.js';
import { type Notification, PRIMARY_METHODS, SECONDARY_METHODS } from './types.js';

// data → the JSON object the service sent (decodeData) → a typed Notification (parseNotification): the one pipeline
// of a notification, `notificationFromData` for the handler and `verifyNotification`.

/** Whether a field counts as not sent: absent, `null`, or the empty string (how forms and plugins leave one out). */
export function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

export type JsonProblem = 'not_json' | 'not_object';

/** The object a JSON text holds; otherwise throws what `refused` makes of the problem. */
export function parseJsonObject(
  text: string,
  refused: (problem: JsonProblem) => Error,
): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // No cause: V8's message quotes the text (a piece of the payload), and causes end up in logs.
    throw refused('not_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw refused('not_object');
  return value as Record<string, unknown>;
}

/**
 * Decodes the `data` field (base64url JSON; standard base64 and missing padding tolerated) into the plain object
 * the service sent. `JSON.parse` defines `__proto__` and `constructor` as own data properties, so they stay
 * inert data; nothing here merges them into another object.
 *
 * @throws {PayloadError} `data.encoding_invalid`, `data.json_invalid` or `data.not_object`.
 * @example
 * const raw = decodeData(form.data); // { payment_id: '…', status: 'success', … }
 */
export function decodeData(data: string): Record<string, unknown> {
  return parseDataJson(decodeDataText(data));
}

/** The JSON text inside `data`. @throws {PayloadError} `data.encoding_invalid`. */
export function decodeDataText(data: string): string {
  const text = decodeBase64UrlText(data);
  if (text === undefined || text === '') {
    throw new PayloadError('data.encoding_invalid', 'data is not base64url (or base64) text.');
  }
  return text;
}

/** The object a notification's JSON text holds. @throws {PayloadError} `data.json_invalid` or `data.not_object`. */
export function parseDataJson(text: string): Record<string, unknown> {
  return parseJsonObject(text, dataRefused);
}

function dataRefused(problem: JsonProblem): PayloadError {
  return problem === 'not_json'
    ? new PayloadError('data.json_invalid', 'data decodes to text that is not JSON.')
    : new PayloadError('data.not_object', 'data decodes to JSON that is not an object.');
}

/** What a required field must hold once coerced: non-empty text, a finite number, or anything sent. */
type Holds = 'text' | 'number' | 'sent';

/** The required fields of every notification (spec 6.1), in the order of its table; a secondary operation's add one. */
const REQUIRED: readonly (readonly [field: string, holds: Holds])[] = [
  ['payment_id', 'text'],
  ['order_id', 'text'],
  ['pos_id', 'text'],
  ['mode', 'sent'],
  ['method', 'text'],
  ['amount', 'number'],
  ['currency', 'sent'],
  ['status', 'text'],
  ['created_at', 'sent'],
];
/** Spec 6.2: a capture, void or refund also names its operation. */
const REQUIRED_SECONDARY: typeof REQUIRED = [...REQUIRED, ['operation_id', 'sent']];

// Linear on any text: no two ways to split a run of digits.
const DECIMAL = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?\s*$/i;

function toNumber(value: unknown): unknown {
  return typeof value === 'string' && DECIMAL.test(value) ? Number(value) : value;
}

function toObject(value: unknown): unknown {
  if (typeof value !== 'string' || !value.startsWith('{')) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

type Kind = Notification['kind'];

/**
 * Turns a decoded notification object into a typed `Notification`, tolerant of how the service and its plugins
 * spell values: numbers and booleans sent as strings are coerced, `status_code` becomes a string, `limit_info`
 * and the commission objects may be JSON strings. Unknown fields are kept; `raw` keeps the object as sent.
 * Secondary operations (capture, void, refund) are recognised by `method`, recurring charges by `recurring`.
 *
 * @throws {PayloadError} `notification.invalid`, naming every missing required field (spec 6.1 and 6.2).
 * @example
 * const notification = parseNotification(decodeData(form.data));
 * if (notification.kind === 'secondary') console.log(notification.operation_id);
 */
export function parseNotification(raw: Readonly<Record<string, unknown>>): Notification {
  // `kind` first: V8 copies the rest into that shape fast, where adding a key afterwards is slow.
  return typed({ kind: undefined, ...raw }, raw);
}

/**
 * The notification a delivery's `data` carries (`decodeData`, then `parseNotification`), for the handler and
 * `verifyNotification`. The object just parsed is held by no one else, so it is typed in place and `raw` is a
 * shallow copy taken first: cheaper than copying it into a new shape (bench/README.md, Profiling).
 */
export function notificationFromData(data: string): Notification {
  const parsed = parseJsonObject(decodeDataText(data), dataRefused);
  return typed(parsed, { ...parsed });
}

/**
 * The object as sent of each `notification.invalid` thrown here, by error: a capture keeps it (masked) for a delivery
 * refused after its signature matched. Held by no one else, so nothing reaches it from the error (`onError` sees the
 * error) and it goes with the error.
 */
const invalidObjects = new WeakMap<object, Readonly<Record<string, unknown>>>();

/** The decoded object whose `notification.invalid` this is, as sent; `undefined` for any other error. */
export function invalidNotificationObject(error: unknown): Readonly<Record<string, unknown>> | undefined {
  return typeof error === 'object' && error !== null ? invalidObjects.get(error) : undefined;
}

/** Types `n` in place (`raw` holds the same fields, as sent): `kind`, the coerced fields, then `raw`, hidden. */
function typed(n: Record<string, unknown>, raw: Readonly<Record<string, unknown>>): Notification {
  const { method } = raw;
  const kind: Kind =
    typeof method !== 'string'
      ? 'other'
      : SECONDARY_METHODS.has(method)
        ? 'secondary'
        : PRIMARY_METHODS.has(method)
          ? 'primary'
          : 'other';
  n.kind = kind;
  const invalid = typeFields(n, kind);
  if (invalid !== undefined) {
    const error = new PayloadError(
      'notification.invalid',
      `notification is missing or has malformed required fields: ${invalid.join(', ')}.`,
      { fields: invalid },
    );
    invalidObjects.set(error, raw);
    throw error;
  }
  Object.defineProperty(n, 'raw', { value: raw, enumerable: false });
  return n as unknown as Notification;
}

/** Coerces the fields of `n` in place; returns the required ones it lacks, or `undefined`. */
function typeFields(n: Record<string, unknown>, kind: Kind): string[] | undefined {
  // One call per field with a literal name: V8 inlines them into plain property reads.
  coerceString(n, 'payment_id');
  coerceString(n, 'order_id');
  coerceString(n, 'pos_id');
  coerceString(n, 'operation_id');
  coerceString(n, 'transaction_id');
  coerceString(n, 'mode');
  coerceString(n, 'method');
  coerceString(n, 'status');
  coerceString(n, 'status_code');
  coerceString(n, 'currency');
  coerceNumber(n, 'amount');
  coerceNumber(n, 'processed_amount');
  coerceObject(n, 'fee');
  coerceObject(n, 'fixed_fee');
  coerceObject(n, 'percent_fee');
  coerceObject(n, 'recurring');
  if (n.limit_info !== undefined) {
    const value = toObject(n.limit_info);
    n.limit_info = typeof value === 'string' ? { description: value } : value;
  }
  const action = n.user_action_required;
  if (action === 'true' || action === '1' || action === 1) n.user_action_required = true;
  else if (action === 'false' || action === '0' || action === 0) n.user_action_required = false;
  return invalidFields(n, kind);
}

function coerceString(n: Record<string, unknown>, field: string): void {
  const value = n[field];
  if (typeof value === 'number' || typeof value === 'bigint') n[field] = String(value);
}

function coerceNumber(n: Record<string, unknown>, field: string): void {
  const value = n[field];
  if (typeof value === 'string') n[field] = toNumber(value);
}

function coerceObject(n: Record<string, unknown>, field: string): void {
  const value = n[field];
  if (value === undefined) return;
  const object = typeof value === 'string' ? toObject(value) : value;
  // Copied only when its amount needs coercing: the nested object is shared with `raw`, which stays as sent.
  if (
    object !== null &&
    typeof object === 'object' &&
    typeof (object as { amount?: unknown }).amount === 'string'
  ) {
    n[field] = { ...object, amount: toNumber((object as { amount: string }).amount) };
  } else if (object !== value) {
    n[field] = object;
  }
}

/** The required fields `n` lacks or holds in the wrong type; `undefined`, with nothing built, when none. */
function invalidFields(n: Record<string, unknown>, kind: Kind): string[] | undefined {
  const required = kind === 'secondary' ? REQUIRED_SECONDARY : REQUIRED;
  let invalid: string[] | undefined;
  for (let i = 0; i < required.length; i++) {
    const [field, what] = required[i]!;
    const value = n[field];
    const holds =
      what === 'text'
        ? typeof value === 'string' && value !== ''
        : what === 'number'
          ? typeof value === 'number' && Number.isFinite(value)
          : !(value === undefined || value === null || value === ''); // isMissing, read in place
    if (holds) continue;
    invalid ??= [];
    invalid.push(field);
  }
  return invalid;
}
