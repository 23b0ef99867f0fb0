import { isMissing } from '../notification/missing.js';
import type { Notification } from '../notification/types.js';
import { digestBase64Url } from '../verify/digest.js';

/**
 * The answer of an atomic claim: this caller may handle it, it was handled, or another caller is handling it.
 * A claim's `fence` grows with every claim that takes the key (1, 2, 3 …): of two runs the later holds the larger
 * one, which is how a log tells which run lost the key. Stores that cannot count leave it out.
 */
export type ClaimResult =
  | { readonly status: 'claimed'; readonly token: string; readonly fence?: number }
  | { readonly status: 'duplicate' }
  | { readonly status: 'in_flight' };

/**
 * Where processed notifications are remembered. `claim` must be atomic: of many concurrent claims of one key,
 * exactly one is `claimed`. A claim is a lease that expires after `leaseMs` (a crashed process cannot hold it
 * forever); `renew` extends the caller's own lease while its handler still runs and answers whether the caller
 * still holds it; `commit` marks the key done for `ttlMs` while `token` still holds the key, or while nobody holds
 * it (the lease expired and no other claim took it), and answers `false` without writing anything when another
 * claim holds it or it is done already (a stale run: fencing); `release` drops the caller's own lease (by `token`)
 * after a handler failure, so the redelivery is handled. A `commit` that answers nothing counts as done.
 *
 * @example
 * const handler = createWebhookHandler({ secret, store: new MemoryStore({ maxEntries: 50_000 }) });
 */
export interface DedupeStore {
  /** Named in errors when the store fails (`store.unavailable`). */
  readonly name: string;
  claim(key: string, leaseMs: number): ClaimResult | Promise<ClaimResult>;
  renew(key: string, token: string, leaseMs: number): boolean | Promise<boolean>;
  // biome-ignore lint/suspicious/noConfusingVoidType: a store written before fencing returns nothing from commit.
  commit(key: string, token: string, ttlMs: number): boolean | void | Promise<boolean | void>;
  release(key: string, token: string): void | Promise<void>;
  /**
   * Optional: drops a done key's record. Called for a notification's handler completions (its steps) once the
   * notification itself is committed, as nothing reads them again; a store without it keeps them until `ttlMs`.
   */
  forget?(key: string): void | Promise<void>;
}

/**
 * A store that runs the application's work inside its own transaction with the claim (a transactional inbox):
 * the claim row and the application's writes commit together or not at all. A concurrent copy waits for the
 * first up to `lockTimeoutMs`, then answers duplicate (it committed) or `in_flight` (it is still running); the
 * store calls `onWaiting` as that wait starts, once it knows it waits for a concurrent copy: until then the handler
 * bounds the store's part by `storeTimeoutMs` (a frozen database), from then by `lockTimeoutMs` more.
 * A store that can tell its transaction will not commit while `work` still runs (its connection died) calls
 * `onLost`, so the handlers' `delivery.signal` aborts.
 */
export interface TransactionalStore<Tx = unknown> {
  readonly name: string;
  transaction<T>(
    key: string,
    work: (tx: Tx) => Promise<T>,
    options?: {
      readonly lockTimeoutMs?: number;
      readonly onWaiting?: () => void;
      readonly onLost?: (reason: unknown) => void;
    },
  ): Promise<TransactionResult<T>>;
}

/**
 * What a transactional store's `transaction` resolves: the work ran and committed (`done`), the notification
 * was handled already (`duplicate`), or another copy still holds it (`in_flight`).
 *
 * @example
 * const result: TransactionResult<void> = await inbox.transaction(key, async (tx) => {});
 */
export type TransactionResult<T> =
  | { readonly status: 'duplicate' }
  | { readonly status: 'in_flight' }
  | { readonly status: 'done'; readonly value: T };

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

/**
 * A lone surrogate (UTF-8 stores turn each into U+FFFD, so two keys would meet) or a NUL (PostgreSQL refuses it).
 * `isWellFormed` answers a one-byte string without reading it, where a regular expression scans every key.
 */
function isUnstorable(key: string): boolean {
  return !(key as unknown as WellFormed).isWellFormed() || key.includes('\0');
}

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
  const unstorable = isUnstorable(key);
  if (key.length <= MAX_KEY_LENGTH && !unstorable) return key;
  const digest = digestBase64Url('sha256', utf16Units(key));
  // The readable start only where it is plain text.
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

/** True when the store runs the application's work in its own transaction. */
export function isTransactionalStore(store: DedupeStore | TransactionalStore): store is TransactionalStore {
  return typeof (store as TransactionalStore).transaction === 'function';
}
