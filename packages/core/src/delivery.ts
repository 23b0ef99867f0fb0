/** Facts about one delivery that the application handler may want. */
export interface Delivery {
  /** The duplicate-detection key as stored (see `boundKey`); `undefined` when the notification is not deduplicated. */
  readonly key: string | undefined;
  /** The position of the matching secret in the configured list (0 = current; more = an old one still in use). */
  readonly secretIndex: number;
  /** The matching secret's `id`, when secrets are named. */
  readonly secretId: string | undefined;
  /** The decoded object as sent, unknown fields included. */
  readonly raw: Readonly<Record<string, unknown>>;
  /** With a transactional store: its transaction (for `pg`, the client inside `BEGIN`). */
  readonly transaction?: unknown;
}
