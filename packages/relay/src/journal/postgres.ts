import type { PgQueryable } from '@payhook/core/postgres';
import {
  type ChannelRecord,
  type ChannelStats,
  type Journal,
  type JournalEntry,
  type JournalEvent,
  type ResolvedRetention,
  type Retention,
  resolveRetention,
} from './contract.js';

/**
 * Options of {@link PostgresJournal.open}.
 *
 * @example
 * await PostgresJournal.open({ db: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 */
export interface PostgresJournalOptions {
  /** A `pg` `Pool` (or anything with its `query`). */
  db: PgQueryable;
  /**
   * The tables' prefix: `<prefix>_channels` and `<prefix>_events`, optionally schema-qualified (`relay.payhook`).
   * @default 'payhook_relay'
   */
  prefix?: string;
  /** How long deliveries are kept: see {@link Retention}. */
  retention?: Retention;
  /**
   * Expired rows are deleted at most this often, by the appends and reads that pass by.
   * @default 60_000
   */
  pruneIntervalMs?: number;
  /** The clock, for tests. @default Date.now */
  now?: () => number;
}

const PREFIX = /^(?:[A-Za-z_][A-Za-z0-9_]{0,40}\.)?[A-Za-z_][A-Za-z0-9_]{0,40}$/;

interface Tables {
  readonly channels: string;
  readonly events: string;
}

function tablesOf(prefix = 'payhook_relay'): Tables {
  if (!PREFIX.test(prefix)) {
    throw new TypeError(
      `[@payhook/relay] prefix ${JSON.stringify(prefix)} is not a plain identifier (schema.name).`,
    );
  }
  const quote = (name: string) =>
    name
      .split('.')
      .map((part) => `"${part}"`)
      .join('.');
  return { channels: quote(`${prefix}_channels`), events: quote(`${prefix}_events`) };
}

/**
 * The SQL that creates the journal's two tables; safe to run again (`PostgresJournal.open` runs it under an
 * advisory lock, so instances starting together take turns).
 *
 * @example
 * await pool.query(relayMigrationSql());
 */
export function relayMigrationSql(prefix?: string): string {
  const t = tablesOf(prefix);
  return `DO $$ BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('payhook_relay_migration'));
  CREATE TABLE IF NOT EXISTS ${t.channels} (
    name          text        PRIMARY KEY,
    token_hash    text        NOT NULL UNIQUE,
    created_at    timestamptz NOT NULL,
    last_sequence bigint      NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS ${t.events} (
    channel     text        NOT NULL,
    sequence    bigint      NOT NULL,
    received_at timestamptz NOT NULL,
    media_type  text        NOT NULL,
    sender      text        NOT NULL,
    sha256      text        NOT NULL,
    body        bytea       NOT NULL,
    PRIMARY KEY (channel, sequence)
  );
END $$;`;
}

interface ChannelRow {
  name: string;
  token_hash: string;
  created_at: Date;
}

interface EventRow {
  sequence: string;
  received_at: Date;
  media_type: string;
  sender: string;
  sha256: string;
  body: Buffer;
}

function channelOf(row: ChannelRow | undefined): ChannelRecord | undefined {
  return row && { name: row.name, tokenHash: row.token_hash, createdAt: row.created_at.getTime() };
}

/**
 * A journal in PostgreSQL: durable when the commit is, shared by several relay instances (a serverless host), as
 * long-lived as the database. A channel's sequences are given out under its row's lock, so they commit in order
 * and a reader never skips one.
 *
 * @example
 * import { PostgresJournal } from '@payhook/relay/postgres';
 * const journal = await PostgresJournal.open({ db: pool, retention: { maxAgeMs: 86_400_000 } });
 */
export class PostgresJournal implements Journal {
  readonly #db: PgQueryable;
  readonly #t: Tables;
  readonly #retention: ResolvedRetention;
  readonly #now: () => number;
  readonly #pruneIntervalMs: number;
  #prunedAt = 0;

  private constructor(options: PostgresJournalOptions) {
    this.#db = options.db;
    this.#t = tablesOf(options.prefix);
    this.#retention = resolveRetention(options.retention);
    this.#now = options.now ?? Date.now;
    this.#pruneIntervalMs = options.pruneIntervalMs ?? 60_000;
  }

  /** Creates the tables when missing and returns the journal. */
  static async open(options: PostgresJournalOptions): Promise<PostgresJournal> {
    const journal = new PostgresJournal(options);
    await journal.#db.query(relayMigrationSql(options.prefix));
    return journal;
  }

  async createChannel(channel: ChannelRecord): Promise<boolean> {
    const result = await this.#db.query(
      `INSERT INTO ${this.#t.channels} (name, token_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
      [channel.name, channel.tokenHash, new Date(channel.createdAt)],
    );
    return result.rowCount === 1;
  }

  async findChannel(name: string): Promise<ChannelRecord | undefined> {
    const { rows } = await this.#db.query(
      `SELECT name, token_hash, created_at FROM ${this.#t.channels} WHERE name = $1`,
      [name],
    );
    return channelOf(rows[0] as ChannelRow | undefined);
  }

  async findChannelByToken(tokenHash: string): Promise<ChannelRecord | undefined> {
    const { rows } = await this.#db.query(
      `SELECT name, token_hash, created_at FROM ${this.#t.channels} WHERE token_hash = $1`,
      [tokenHash],
    );
    return channelOf(rows[0] as ChannelRow | undefined);
  }

  async append(channel: string, entry: JournalEntry): Promise<number> {
    const { rows } = await this.#db.query(
      `WITH next AS (
         UPDATE ${this.#t.channels} SET last_sequence = last_sequence + 1 WHERE name = $1 RETURNING last_sequence
       )
       INSERT INTO ${this.#t.events} (channel, sequence, received_at, media_type, sender, sha256, body)
       SELECT $1, last_sequence, $2, $3, $4, $5, $6 FROM next RETURNING sequence`,
      [channel, new Date(entry.receivedAt), entry.mediaType, entry.sender, entry.sha256, entry.body],
    );
    const row = rows[0] as { sequence: string } | undefined;
    if (!row) throw new Error(`[@payhook/relay] no channel ${JSON.stringify(channel)} in this journal.`);
    this.#maybePrune();
    return Number(row.sequence);
  }

  async read(channel: string, after: number, limit: number): Promise<JournalEvent[]> {
    const { rows } = await this.#db.query(
      `SELECT e.sequence, e.received_at, e.media_type, e.sender, e.sha256, e.body
         FROM ${this.#t.events} e JOIN ${this.#t.channels} c ON c.name = e.channel
        WHERE e.channel = $1 AND e.sequence > $2 AND e.sequence > c.last_sequence - $3 AND e.received_at >= $4
        ORDER BY e.sequence LIMIT $5`,
      [channel, after, this.#retention.maxEvents, this.#cutoff(), limit],
    );
    return (rows as EventRow[]).map((row) => ({
      sequence: Number(row.sequence),
      receivedAt: row.received_at.getTime(),
      mediaType: row.media_type,
      sender: row.sender,
      sha256: row.sha256,
      body: new Uint8Array(row.body),
    }));
  }

  async stats(channel: string): Promise<ChannelStats> {
    const { rows } = await this.#db.query(
      `SELECT c.last_sequence, min(e.sequence) AS oldest, max(e.received_at) AS last_received_at
         FROM ${this.#t.channels} c
         LEFT JOIN ${this.#t.events} e
           ON e.channel = c.name AND e.sequence > c.last_sequence - $2 AND e.received_at >= $3
        WHERE c.name = $1
        GROUP BY c.last_sequence`,
      [channel, this.#retention.maxEvents, this.#cutoff()],
    );
    const row = rows[0] as
      | { last_sequence: string; oldest: string | null; last_received_at: Date | null }
      | undefined;
    if (!row) throw new Error(`[@payhook/relay] no channel ${JSON.stringify(channel)} in this journal.`);
    this.#maybePrune();
    const last = Number(row.last_sequence);
    return {
      last,
      oldest: row.oldest === null ? last + 1 : Number(row.oldest),
      lastReceivedAt: row.last_received_at?.getTime(),
    };
  }

  /** Deletes every row retention no longer keeps (also done by appends and reads, at most every `pruneIntervalMs`). */
  async prune(): Promise<void> {
    this.#prunedAt = this.#now();
    await this.#db.query(
      `DELETE FROM ${this.#t.events} e USING ${this.#t.channels} c
        WHERE e.channel = c.name AND (e.sequence <= c.last_sequence - $1 OR e.received_at < $2)`,
      [this.#retention.maxEvents, this.#cutoff()],
    );
  }

  /** The pool is the application's: closing the journal leaves it open. */
  async close(): Promise<void> {}

  #cutoff(): Date {
    return new Date(this.#now() - this.#retention.maxAgeMs);
  }

  #maybePrune(): void {
    if (this.#now() - this.#prunedAt < this.#pruneIntervalMs) return;
    this.prune().catch(() => {
      // Tried again after the interval; reads never return expired rows meanwhile.
    });
  }
}
