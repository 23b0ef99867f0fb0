/** Lowercase letters, digits, `-` and `_`, starting with a letter or digit: it goes into URLs and file names. */
export const CHANNEL_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * One delivery as the relay received it: the raw body (never parsed, never re-encoded), its media type and the
 * sender's address.
 *
 * @example
 * const entry: JournalEntry = { receivedAt: Date.now(), mediaType, sender: '35.187.74.148', body, sha256 };
 */
export interface JournalEntry {
  /** Milliseconds since the epoch. */
  readonly receivedAt: number;
  /** The `Content-Type` header as received (`''` when there was none). */
  readonly mediaType: string;
  /** The sender's address as the relay saw it (`''` when unknown). */
  readonly sender: string;
  /** The SHA-256 of `body`, base64url without padding. */
  readonly sha256: string;
  readonly body: Uint8Array;
}

/**
 * A journaled delivery: the entry and its sequence in its channel (1, 2, 3…, never reused).
 *
 * @example
 * for (const event of await journal.read('alice', 41, 100)) console.log(event.sequence);
 */
export interface JournalEvent extends JournalEntry {
  readonly sequence: number;
}

/**
 * A channel: its name and the SHA-256 of its token (the token itself is never stored).
 *
 * @example
 * const channel: ChannelRecord = { name: 'alice', tokenHash, createdAt: Date.now() };
 */
export interface ChannelRecord {
  readonly name: string;
  readonly tokenHash: string;
  readonly createdAt: number;
}

/**
 * What a channel holds now.
 *
 * @example
 * const { last, oldest } = await journal.stats('alice');
 */
export interface ChannelStats {
  /** The last sequence appended (0 before the first). */
  readonly last: number;
  /** The oldest sequence still retained, or `last + 1` when none is. */
  readonly oldest: number;
  /** When the last retained delivery arrived (ms since the epoch). */
  readonly lastReceivedAt: number | undefined;
}

/**
 * How long deliveries are kept. Notifications carry card tokens (`cc_token`): keep them no longer than a replay
 * needs. Both limits apply; reads never return what either excludes, whenever the journal deletes it.
 *
 * @example
 * new MemoryJournal({ retention: { maxAgeMs: 24 * 3_600_000, maxEvents: 1_000 } });
 */
export interface Retention {
  /**
   * Deliveries older than this are gone. Under core's 7-day duplicate window, so anything the relay can replay
   * is answered `duplicate` by an app that handled it already.
   * @default 259_200_000 (72 hours)
   */
  maxAgeMs?: number;
  /**
   * At most this many deliveries per channel, the newest.
   * @default 10_000
   */
  maxEvents?: number;
}

/**
 * Where the relay keeps channels and deliveries. `append` resolves only once the delivery is durable (as durable
 * as the journal is: memory is not), because the relay answers the service 200 only then.
 *
 * @example
 * const journal: Journal = new MemoryJournal();
 * const sequence = await journal.append('alice', entry);
 */
export interface Journal {
  /** Adds a channel; false when one of that name exists. */
  createChannel(channel: ChannelRecord): Promise<boolean>;
  findChannel(name: string): Promise<ChannelRecord | undefined>;
  findChannelByToken(tokenHash: string): Promise<ChannelRecord | undefined>;
  /** Appends a delivery to an existing channel and resolves its sequence once it is written. */
  append(channel: string, entry: JournalEntry): Promise<number>;
  /** Up to `limit` retained deliveries with a sequence above `after`, in order. */
  read(channel: string, after: number, limit: number): Promise<JournalEvent[]>;
  stats(channel: string): Promise<ChannelStats>;
  close(): Promise<void>;
}

/** Retention with its defaults filled in and checked. */
export interface ResolvedRetention {
  readonly maxAgeMs: number;
  readonly maxEvents: number;
}

const DEFAULT_RETENTION: ResolvedRetention = { maxAgeMs: 72 * 3_600_000, maxEvents: 10_000 };

/** The retention a journal's options ask for, checked (a `TypeError` names the bad option). */
export function resolveRetention(retention: Retention | undefined): ResolvedRetention {
  const maxAgeMs = retention?.maxAgeMs ?? DEFAULT_RETENTION.maxAgeMs;
  const maxEvents = retention?.maxEvents ?? DEFAULT_RETENTION.maxEvents;
  if (!Number.isSafeInteger(maxAgeMs) || maxAgeMs < 1) {
    throw new TypeError(`[@payhook/relay] retention.maxAgeMs must be a positive integer, not ${maxAgeMs}.`);
  }
  if (!Number.isSafeInteger(maxEvents) || maxEvents < 1) {
    throw new TypeError(`[@payhook/relay] retention.maxEvents must be a positive integer, not ${maxEvents}.`);
  }
  return { maxAgeMs, maxEvents };
}

/** Whether a delivery is still retained, given the channel's last sequence. */
export function isRetained(
  event: { sequence: number; receivedAt: number },
  last: number,
  retention: ResolvedRetention,
  now: number,
): boolean {
  return event.sequence > last - retention.maxEvents && event.receivedAt >= now - retention.maxAgeMs;
}
