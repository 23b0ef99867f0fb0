import type { Notification } from '../notification/types.js';

/** Position of a status in the public payment cycle; unknown statuses are never stale. */
const STATUS_RANK: Readonly<Record<string, number>> = {
  init: 0,
  pending: 1,
  processing: 2,
  success: 3,
  failure: 3,
};

export interface OrderingOptions {
  /**
   * The most payments whose last handled status is remembered; the oldest is forgotten first.
   * @default 100_000
   */
  maxEntries?: number;
}

function paymentKey(notification: Notification): string | undefined {
  if (notification.kind === 'secondary') return undefined;
  const id =
    (notification.kind === 'primary' && notification.recurring && notification.transaction_id) ||
    notification.payment_id;
  return `${id}:${notification.method}`;
}

/**
 * Remembers the furthest status handled per payment, so a notification from earlier in the cycle (pending after
 * success) is recognised as stale instead of reaching the handler.
 */
export class OrderingGuard {
  readonly #last = new Map<string, number>();
  readonly #maxEntries: number;

  constructor(options?: OrderingOptions) {
    this.#maxEntries = Math.max(1, options?.maxEntries ?? 100_000);
  }

  /** True when a later status of the same payment was already handled. */
  isStale(notification: Notification): boolean {
    const key = paymentKey(notification);
    const rank = STATUS_RANK[notification.status];
    if (key === undefined || rank === undefined) return false;
    const last = this.#last.get(key);
    return last !== undefined && rank < last;
  }

  record(notification: Notification): void {
    const key = paymentKey(notification);
    const rank = STATUS_RANK[notification.status];
    if (key === undefined || rank === undefined) return;
    const last = this.#last.get(key);
    if (last !== undefined && last >= rank) return;
    this.#last.delete(key);
    if (this.#last.size >= this.#maxEntries) {
      for (const first of this.#last.keys()) {
        this.#last.delete(first);
        break;
      }
    }
    this.#last.set(key, rank);
  }
}
