import type { Logger } from '../diagnostics/report.js';
import { isMissing } from '../notification/parse.js';
import type { Notification } from '../notification/types.js';
import { digestBase64Url } from '../verify/signature.js';

/**
 * Computes the duplicate-detection key of a notification; `undefined` handles it without duplicate detection
 * (nothing in it tells it apart from another notification of the same payment).
 */
export type KeyFunction = (notification: Notification) => string | undefined;

/**
 * The default identity of a notification: the operation (operation_id for capture, void and refund;
 * transaction_id for a recurring charge; payment_id otherwise) plus method, status and status_code. A redelivery
 * with a later `processed_at` or a new field is the same key; pending then success, two partial refunds, or two
 * charges of one subscription are different keys.
 *
 * A recurring charge without `transaction_id` is told apart by its `created_at`, `processed_at` and `amount`
 * (two charges must never share a key: a lost payment is worse than a charge handled again); without
 * `processed_at` either, nothing tells two charges apart and the key is `undefined`: the handler handles it
 * without duplicate detection and warns.
 *
 * @example
 * notificationKey(n); // 'a3bb189e-…:purchase:success:1000'
 */
export function notificationKey(notification: Notification): string | undefined {
  let id: string;
  if (notification.kind === 'secondary') id = notification.operation_id;
  else if (notification.kind === 'other') id = notification.operation_id ?? notification.payment_id;
  else if (notification.recurring === undefined || notification.recurring === null)
    id = notification.payment_id;
  else if (notification.transaction_id) id = notification.transaction_id;
  else if (isMissing(notification.processed_at)) return undefined;
  else {
    const { payment_id, created_at, processed_at, amount } = notification;
    id = `${payment_id}@${String(created_at)}/${String(processed_at)}/${amount}`;
  }
  return `${id}:${notification.method}:${notification.status}:${notification.status_code ?? ''}`;
}

/** Keys up to this length are stored as they are; longer ones keep a readable start and a hash of the whole. */
const MAX_KEY_LENGTH = 200;

/** `String#isWellFormed`: ES2024, in Node 20 and every runtime payhook supports; the TypeScript lib here is ES2023. */
type WellFormed = { isWellFormed(): boolean };

/**
 * The key as stores keep it: short keys unchanged (readable in Redis or a table); longer ones (a 3,000-character
 * id from a signed notification), and keys no store can hold as text (a NUL, a lone surrogate), become a
 * readable start plus the SHA-256 of the key's UTF-16 code units, so no store meets a key past its index limit
 * and two keys never meet.
 *
 * @example
 * boundKey('x'.repeat(3_000)); // 'xxxx…xxxx#sha256:9f86d08…' (151 characters)
 */
export function boundKey(key: string): string {
  // A lone surrogate (UTF-8 stores turn each into U+FFFD, so two keys would meet) or a NUL (PostgreSQL refuses
  // it). `isWellFormed` answers a one-byte string without reading it, where a regular expression scans every key.
  const unstorable = !(key as unknown as WellFormed).isWellFormed() || key.includes('\0');
  if (key.length <= MAX_KEY_LENGTH && !unstorable) return key;
  const digest = digestBase64Url('sha256', utf16Units(key));
  const start = unstorable ? '' : key.slice(0, 100).replace(/[\ud800-\udbff]$/, '');
  return `${start}#sha256:${digest}`;
}

/** The key's UTF-16 code units, little-endian: what its hash covers (a lone surrogate too, unlike UTF-8). */
function utf16Units(key: string): Uint8Array {
  const units = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    units[i * 2] = code & 0xff;
    units[i * 2 + 1] = code >> 8;
  }
  return units;
}

export function createKeyFor(
  keyOf: KeyFunction,
  logger: Logger,
): (notification: Notification) => string | undefined {
  return (notification) => {
    const key = keyOf(notification);
    if (key !== undefined) return boundKey(key);
    if (logger) {
      logger.warn(
        `[@payhook/core] a ${notification.method} notification of payment ${notification.payment_id} carries nothing that tells it apart from another (a recurring charge without transaction_id or processed_at): it is handled without duplicate detection.`,
      );
    }
    return undefined;
  };
}
