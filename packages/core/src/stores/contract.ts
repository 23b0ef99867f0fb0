// The contract between the exactly-once protocol and a store: what a store promises, what the handler calls.

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

/** True when the store runs the application's work in its own transaction. */
export function isTransactionalStore(store: DedupeStore | TransactionalStore): store is TransactionalStore {
  return typeof (store as TransactionalStore).transaction === 'function';
}
