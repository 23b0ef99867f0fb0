import type { Notification } from './notification.js';

/** The answer of an atomic claim: this caller may handle it, it was handled, or another caller is handling it. */
export type ClaimResult =
  | { readonly status: 'claimed'; readonly token: string }
  | { readonly status: 'duplicate' }
  | { readonly status: 'in_flight' };

/**
 * Where processed notifications are remembered. `claim` must be atomic: of many concurrent claims of one key,
 * exactly one is `claimed`. A claim is a lease that expires after `leaseMs` (a crashed process cannot hold it
 * forever); `commit` marks the key done for `ttlMs`; `release` drops the caller's own lease (by `token`) after a
 * handler failure, so the redelivery is handled.
 *
 * @example
 * const handler = createWebhookHandler({ secret, store: new MemoryStore({ maxEntries: 50_000 }) });
 */
export interface DedupeStore {
  /** Named in errors when the store fails (`store.unavailable`). */
  readonly name: string;
  claim(key: string, leaseMs: number): ClaimResult | Promise<ClaimResult>;
  commit(key: string, token: string, ttlMs: number): void | Promise<void>;
  release(key: string, token: string): void | Promise<void>;
}

/**
 * A store that runs the application's work inside its own transaction with the claim (a transactional inbox):
 * the claim row and the application's writes commit together or not at all. Concurrent copies wait for the
 * first and then answer duplicate.
 */
export interface TransactionalStore<Tx = unknown> {
  readonly name: string;
  transaction<T>(
    key: string,
    work: (tx: Tx) => Promise<T>,
  ): Promise<{ readonly status: 'duplicate' } | { readonly status: 'done'; readonly value: T }>;
}

/** Computes the duplicate-detection key of a notification. */
export type KeyFunction = (notification: Notification) => string;

/**
 * The default identity of a notification: the operation (operation_id for capture, void and refund;
 * transaction_id for a recurring charge; payment_id otherwise) plus method, status and status_code. A redelivery
 * with a later `processed_at` or a new field is the same key; pending then success, two partial refunds, or two
 * charges of one subscription are different keys.
 *
 * @example
 * notificationKey(n); // 'a3bb189e-…:purchase:success:1000'
 */
export function notificationKey(notification: Notification): string {
  let id: string;
  if (notification.kind === 'secondary') id = notification.operation_id;
  else if (notification.kind === 'other') id = notification.operation_id ?? notification.payment_id;
  else id = (notification.recurring && notification.transaction_id) || notification.payment_id;
  return `${id}:${notification.method}:${notification.status}:${notification.status_code ?? ''}`;
}

/** True when the store runs the application's work in its own transaction. */
export function isTransactionalStore(store: DedupeStore | TransactionalStore): store is TransactionalStore {
  return typeof (store as TransactionalStore).transaction === 'function';
}
