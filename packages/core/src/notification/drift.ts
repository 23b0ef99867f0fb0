import { printable } from '../diagnostics/printable.js';
import { CUSTOMER_FIELDS } from './customer-fields.js';
import type { Notification } from './types.js';

/**
 * What a notification carried beyond what payhook types: a `field` it does not know, a `status`, `status_code` or
 * `method` it does not know, a known field of another `type` than its type (a field turned nullable), or one
 * `coerced` into its type by `parseNotification` (an amount sent as text, a status code as a number).
 */
export type DriftKind = 'field' | 'status' | 'status_code' | 'method' | 'type' | 'coerced';

/** A JSON value's type, as drift names it. */
export type JsonType = 'string' | 'number' | 'boolean' | 'null' | 'object' | 'array';

/**
 * One thing a notification carried beyond what payhook types. Only names: a field's name, or the status, status
 * code or method as sent; never a field's value.
 *
 * @example
 * const finding: DriftFinding = { kind: 'type', name: 'transaction_id', sent: 'null', expected: 'string' };
 */
export interface DriftFinding {
  /** What drifted: a new `field`, `status`, `status_code` or `method`, a `type` change, or a value `coerced`. */
  readonly kind: DriftKind;
  /** The field (`fee.amount` for a commission's amount), or the status, status code or method as sent. */
  readonly name: string;
  /** `type` and `coerced`: the type that arrived. */
  readonly sent?: JsonType;
  /** `type` and `coerced`: the type payhook gives the field. */
  readonly expected?: JsonType;
}

/** Every field payhook types (types.ts: spec 2.1, 2.2, 6.1, 6.2) and the JSON type it has there. */
export const TYPED: ReadonlyMap<string, JsonType> = new Map<string, JsonType>([
  ...[
    'payment_id',
    'order_id',
    'operation_id',
    'gateway_order_id',
    'billing_order_id',
    'transaction_id',
    'pos_id',
    'mode',
    'method',
    'currency',
    'description',
    'status',
    'status_code',
    'status_description',
    'user_action_url',
    'eci',
    'mcc',
    'options_3ds',
    'payway',
    'cc_mask',
    'cc_token',
    'cc_token_expiration',
    ...CUSTOMER_FIELDS,
    'result_url',
    'created_at',
    'processed_at',
    'payload',
    'bank_short_name',
    'receipt_url',
    'processed_currency',
  ].map((field) => [field, 'string'] as const),
  ['amount', 'number'],
  ['processed_amount', 'number'],
  ['user_action_required', 'boolean'],
  ['fee', 'object'],
  ['fixed_fee', 'object'],
  ['percent_fee', 'object'],
  ['limit_info', 'object'],
  ['recurring', 'object'],
]);

// Known names as `switch`es, not sets: a value from JSON.parse is a fresh string, which a set must hash first, where
// comparing it with a few constants stops at the first differing length or character.

/**
 * The method (`Method` in types.ts: spec 6.1 and 6.2), status (`KnownStatus`: the public payment cycle) and status
 * code (spec 3.1 and the service's public material: success, auth hold, refund, 3DS) of `n` that payhook does not
 * know, added to `found`. One function of `switch`es: it runs on every delivery while a logger is set.
 */
function unknownNames(n: Notification, found: DriftFinding[] | undefined): DriftFinding[] | undefined {
  switch (n.method) {
    case 'purchase':
    case 'auth':
    case 'credit':
    case 'p2p':
    case 'lookup':
    case 'capture':
    case 'void':
    case 'refund':
      break;
    default:
      found = push(found, { kind: 'method', name: cut(n.method) });
  }
  switch (n.status) {
    case 'init':
    case 'pending':
    case 'processing':
    case 'success':
    case 'failure':
      break;
    default:
      found = push(found, { kind: 'status', name: cut(n.status) });
  }
  const code = n.status_code;
  if (typeof code === 'string' && code !== '1000' && code !== '1002' && code !== '1004' && code !== '2122') {
    found = push(found, { kind: 'status_code', name: cut(code) });
  }
  return found;
}
const COMMISSIONS = ['fee', 'fixed_fee', 'percent_fee'] as const;
/** Longer names are cut: a name is a label, not a place for whatever the sender wrote. */
const NAME_LENGTH = 64;

/** The JSON type of a decoded value. */
function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean' ? type : 'object';
}

/**
 * What a parsed notification carried beyond what payhook types, read from `notification.raw` (as sent) and the
 * notification (as typed); `undefined`, with nothing built, when it carried nothing new. It runs on every delivery
 * while a logger is set: a notification without drift costs a read of each typed field by name and a count of its
 * fields; only one with drift is looked at field by field.
 *
 * @example
 * const drift = findDrift(parseNotification(decodeData(form.data)));
 * for (const { kind, name } of drift ?? []) console.log(kind, name); // field refund_reason, status rejected
 */
export function findDrift(notification: Notification): DriftFinding[] | undefined {
  const raw = notification.raw;
  let fields = 0;
  for (const _field in raw) fields++;
  // `sentAsTyped`, counted in place: this runs for every delivery while a logger is set.
  const typed = typedFields(raw) === fields;
  const found = unknownNames(notification, typed ? undefined : fieldDrift(raw, notification));
  return typed ? found : commissionDrift(raw, found);
}

/**
 * Whether every field of `raw` is one payhook types, sent as its type (a commission's amount as a number): the
 * typed fields present, each read by its literal name (V8 turns these into plain loads, where a look-up of every
 * name sent cost three times as much: `pnpm bench:instructions`), must be all the fields there are.
 */
export function sentAsTyped(raw: Readonly<Record<string, unknown>>): boolean {
  let fields = 0;
  for (const _field in raw) fields++;
  return typedFields(raw) === fields;
}

// A field counts 1 in `typedFields` when sent as its type, 0 when absent or of another type: the sum equals the
// count of fields only when every field sent is typed and of its type. Written out, not through a helper per type:
// this runs on every delivery while a logger is set, and each helper was a call per field.
/** An object field (a commission's amount as a number, when `amount`): 1 when sent so, else 0. */
function objectCount(value: unknown, amount: boolean): number {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 0;
  return amount && typeof (value as { amount?: unknown }).amount === 'string' ? 0 : 1;
}

/** How many fields of `TYPED` `raw` holds as their type: the same names and types, each read by its literal name. */
function typedFields(r: Readonly<Record<string, unknown>>): number {
  return (
    +(typeof r.payment_id === 'string') +
    +(typeof r.order_id === 'string') +
    +(typeof r.operation_id === 'string') +
    +(typeof r.gateway_order_id === 'string') +
    +(typeof r.billing_order_id === 'string') +
    +(typeof r.transaction_id === 'string') +
    +(typeof r.pos_id === 'string') +
    +(typeof r.mode === 'string') +
    +(typeof r.method === 'string') +
    +(typeof r.currency === 'string') +
    +(typeof r.description === 'string') +
    +(typeof r.status === 'string') +
    +(typeof r.status_code === 'string') +
    +(typeof r.status_description === 'string') +
    +(typeof r.user_action_url === 'string') +
    +(typeof r.eci === 'string') +
    +(typeof r.mcc === 'string') +
    +(typeof r.options_3ds === 'string') +
    +(typeof r.payway === 'string') +
    +(typeof r.cc_mask === 'string') +
    +(typeof r.cc_token === 'string') +
    +(typeof r.cc_token_expiration === 'string') +
    +(typeof r.customer_id === 'string') +
    +(typeof r.customer_ip === 'string') +
    +(typeof r.customer_fname === 'string') +
    +(typeof r.customer_lname === 'string') +
    +(typeof r.customer_patronym === 'string') +
    +(typeof r.customer_email === 'string') +
    +(typeof r.customer_phone === 'string') +
    +(typeof r.customer_country === 'string') +
    +(typeof r.customer_birthday === 'string') +
    +(typeof r.result_url === 'string') +
    +(typeof r.created_at === 'string') +
    +(typeof r.processed_at === 'string') +
    +(typeof r.payload === 'string') +
    +(typeof r.bank_short_name === 'string') +
    +(typeof r.receipt_url === 'string') +
    +(typeof r.processed_currency === 'string') +
    +(typeof r.amount === 'number') +
    +(typeof r.processed_amount === 'number') +
    +(typeof r.user_action_required === 'boolean') +
    objectCount(r.fee, true) +
    objectCount(r.fixed_fee, true) +
    objectCount(r.percent_fee, true) +
    objectCount(r.limit_info, false) +
    objectCount(r.recurring, false)
  );
}

/** Each field of `raw` looked up: unknown, another type, or coerced. */
function fieldDrift(
  raw: Readonly<Record<string, unknown>>,
  notification: Notification,
): DriftFinding[] | undefined {
  const typed = notification as unknown as Readonly<Record<string, unknown>>;
  let found: DriftFinding[] | undefined;
  for (const field in raw) {
    const expected = TYPED.get(field);
    const value = raw[field];
    if (expected === undefined) {
      found = push(found, { kind: 'field', name: cut(field) });
    } else if (typeof value !== expected || (expected === 'object' && jsonType(value) !== 'object')) {
      const kind = jsonType(typed[field]) === expected ? 'coerced' : 'type';
      found = push(found, { kind, name: field, sent: jsonType(value), expected });
    }
  }
  return found;
}

/** A commission (spec 2.4) whose amount came as text: coerced to a number by `parseNotification`. */
function commissionDrift(
  raw: Readonly<Record<string, unknown>>,
  found: DriftFinding[] | undefined,
): DriftFinding[] | undefined {
  for (const field of COMMISSIONS) {
    const commission = raw[field];
    if (typeof commission !== 'object' || commission === null) continue;
    const amount = (commission as { amount?: unknown }).amount;
    if (typeof amount !== 'string') continue;
    found = push(found, { kind: 'coerced', name: `${field}.amount`, sent: 'string', expected: 'number' });
  }
  return found;
}

function push(found: DriftFinding[] | undefined, finding: DriftFinding): DriftFinding[] {
  if (found === undefined) return [finding];
  found.push(finding);
  return found;
}

/** A name as a finding keeps it: cut, and control and bidi characters escaped (it reaches logs and metrics). */
function cut(name: string): string {
  return printable(name, NAME_LENGTH);
}
