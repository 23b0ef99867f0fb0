import {
  type ChannelRecord,
  type ChannelStats,
  isRetained,
  type Journal,
  type JournalEntry,
  type JournalEvent,
  type ResolvedRetention,
  type Retention,
  resolveRetention,
} from './contract.js';

/**
 * Options of {@link MemoryJournal}.
 *
 * @example
 * new MemoryJournal({ retention: { maxEvents: 100 } });
 */
export interface MemoryJournalOptions {
  /** How long deliveries are kept: see {@link Retention}. */
  retention?: Retention;
  /** The clock, for tests. @default Date.now */
  now?: () => number;
}

interface MemoryChannel {
  record: ChannelRecord;
  last: number;
  events: JournalEvent[];
}

/**
 * A journal in the process's memory: for tests and for trying the relay. Nothing survives a restart, so the
 * service's deliveries answered 200 are lost with the process; use `FileJournal` or `PostgresJournal` to serve.
 *
 * @example
 * const relay = createRelay({ journal: new MemoryJournal(), adminToken, signingSecret });
 */
export class MemoryJournal implements Journal {
  readonly #channels = new Map<string, MemoryChannel>();
  readonly #retention: ResolvedRetention;
  readonly #now: () => number;

  constructor(options?: MemoryJournalOptions) {
    this.#retention = resolveRetention(options?.retention);
    this.#now = options?.now ?? Date.now;
  }

  async createChannel(channel: ChannelRecord): Promise<boolean> {
    if (this.#channels.has(channel.name)) return false;
    this.#channels.set(channel.name, { record: channel, last: 0, events: [] });
    return true;
  }

  async findChannel(name: string): Promise<ChannelRecord | undefined> {
    return this.#channels.get(name)?.record;
  }

  async findChannelByToken(tokenHash: string): Promise<ChannelRecord | undefined> {
    for (const { record } of this.#channels.values()) if (record.tokenHash === tokenHash) return record;
    return undefined;
  }

  async append(channel: string, entry: JournalEntry): Promise<number> {
    const state = this.#channel(channel);
    state.last += 1;
    state.events.push({ ...entry, body: entry.body.slice(), sequence: state.last });
    this.#prune(state);
    return state.last;
  }

  async read(channel: string, after: number, limit: number): Promise<JournalEvent[]> {
    const state = this.#channel(channel);
    this.#prune(state);
    return state.events.filter((event) => event.sequence > after).slice(0, limit);
  }

  async stats(channel: string): Promise<ChannelStats> {
    const state = this.#channel(channel);
    this.#prune(state);
    const first = state.events[0];
    return {
      last: state.last,
      oldest: first?.sequence ?? state.last + 1,
      lastReceivedAt: state.events.at(-1)?.receivedAt,
    };
  }

  async close(): Promise<void> {}

  #channel(name: string): MemoryChannel {
    const state = this.#channels.get(name);
    if (!state) throw new Error(`[@payhook/relay] no channel ${JSON.stringify(name)} in this journal.`);
    return state;
  }

  #prune(state: MemoryChannel): void {
    const now = this.#now();
    const keep = state.events.findIndex((event) => isRetained(event, state.last, this.#retention, now));
    if (keep === -1) state.events = [];
    else if (keep > 0) state.events = state.events.slice(keep);
  }
}
