import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import {
  CHANNEL_NAME,
  type ChannelRecord,
  type ChannelStats,
  type Journal,
  type JournalEntry,
  type JournalEvent,
  type ResolvedRetention,
  type Retention,
  resolveRetention,
} from './contract.js';
import { ChannelLog } from './file-log.js';

/**
 * Options of {@link FileJournal.open}.
 *
 * @example
 * await FileJournal.open({ directory: '/var/lib/payhook-relay', retention: { maxAgeMs: 86_400_000 } });
 */
export interface FileJournalOptions {
  /** The journal's directory (created when missing). One relay process per directory. */
  directory: string;
  /** How long deliveries are kept: see {@link Retention}. */
  retention?: Retention;
  /**
   * Records per segment file; retention deletes whole segments.
   * @default 1_000
   */
  segmentEvents?: number;
  /**
   * A segment is closed once it holds this many bytes.
   * @default 67_108_864
   */
  segmentBytes?: number;
  /**
   * How often expired segments are deleted, even when nothing arrives.
   * @default 60_000
   */
  pruneIntervalMs?: number;
  /** The clock, for tests. @default Date.now */
  now?: () => number;
}

/**
 * An append-only journal on the local disk, for a relay on one server (Node.js, Bun, Deno). A delivery is
 * answered 200 only after `fdatasync`; a restart (even after `kill -9`) finds every acknowledged delivery and
 * drops a torn last write. Deliveries stay on disk: memory holds one line per segment file, whatever the backlog.
 *
 * @example
 * import { FileJournal } from '@payhook/relay/file';
 * const journal = await FileJournal.open({ directory: '/var/lib/payhook-relay' });
 */
export class FileJournal implements Journal {
  readonly #directory: string;
  readonly #retention: ResolvedRetention;
  readonly #limits: { segmentEvents: number; segmentBytes: number };
  readonly #now: () => number;
  readonly #channels = new Map<string, ChannelRecord>();
  readonly #logs = new Map<string, ChannelLog>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #registry: Promise<unknown> = Promise.resolve();

  private constructor(options: FileJournalOptions) {
    this.#directory = options.directory;
    this.#retention = resolveRetention(options.retention);
    this.#limits = {
      segmentEvents: options.segmentEvents ?? 1_000,
      segmentBytes: options.segmentBytes ?? 67_108_864,
    };
    this.#now = options.now ?? Date.now;
  }

  /** Opens the journal in `directory`: its channels, and each channel's last segment checked after a crash. */
  static async open(options: FileJournalOptions): Promise<FileJournal> {
    const journal = new FileJournal(options);
    await mkdir(join(journal.#directory, 'channels'), { recursive: true });
    for (const record of await journal.#readRegistry()) {
      journal.#channels.set(record.name, record);
      journal.#logs.set(record.name, await journal.#openLog(record.name));
    }
    await journal.prune();
    const every = options.pruneIntervalMs ?? 60_000;
    journal.#timer = setInterval(() => void journal.prune().catch(() => {}), every);
    journal.#timer.unref?.();
    return journal;
  }

  #openLog(name: string): Promise<ChannelLog> {
    return ChannelLog.open(join(this.#directory, 'channels', name), {
      ...this.#limits,
      retention: this.#retention,
    });
  }

  async #readRegistry(): Promise<ChannelRecord[]> {
    try {
      return JSON.parse(await readFile(join(this.#directory, 'channels.json'), 'utf8'))
        .channels as ChannelRecord[];
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
  }

  /** Rewrites `channels.json` atomically: a temporary file, synced, renamed over it, the directory synced. */
  async #writeRegistry(): Promise<void> {
    const path = join(this.#directory, 'channels.json');
    const temporary = `${path}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(JSON.stringify({ channels: [...this.#channels.values()] }, null, 2));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    const directory = await open(this.#directory, 'r');
    await directory.sync().finally(() => directory.close());
  }

  createChannel(channel: ChannelRecord): Promise<boolean> {
    const creation = this.#registry.then(async () => {
      if (!CHANNEL_NAME.test(channel.name)) {
        throw new TypeError(`[@payhook/relay] ${JSON.stringify(channel.name)} is not a channel name.`);
      }
      if (this.#channels.has(channel.name)) return false;
      const log = await this.#openLog(channel.name);
      this.#channels.set(channel.name, channel);
      try {
        await this.#writeRegistry();
      } catch (error) {
        this.#channels.delete(channel.name);
        await log.close();
        throw error;
      }
      this.#logs.set(channel.name, log);
      return true;
    });
    this.#registry = creation.catch(() => {});
    return creation;
  }

  async findChannel(name: string): Promise<ChannelRecord | undefined> {
    return this.#channels.get(name);
  }

  async findChannelByToken(tokenHash: string): Promise<ChannelRecord | undefined> {
    for (const record of this.#channels.values()) if (record.tokenHash === tokenHash) return record;
    return undefined;
  }

  append(channel: string, entry: JournalEntry): Promise<number> {
    return this.#log(channel).append(entry);
  }

  async read(channel: string, after: number, limit: number): Promise<JournalEvent[]> {
    const log = this.#log(channel);
    try {
      return await log.read(after, limit, this.#now());
    } catch (error) {
      // A segment deleted by retention while it was read: read again from what is retained now.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return log.read(after, limit, this.#now());
    }
  }

  async stats(channel: string): Promise<ChannelStats> {
    const log = this.#log(channel);
    const oldest = await log.oldest(this.#now());
    const tail = log.segments.at(-1);
    const lastReceivedAt = oldest <= log.last && tail && tail.count > 0 ? tail.lastReceivedAt : undefined;
    return { last: log.last, oldest, lastReceivedAt };
  }

  /** Deletes what retention no longer keeps (also every `pruneIntervalMs`). */
  async prune(): Promise<void> {
    for (const log of this.#logs.values()) await log.prune(this.#now());
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#registry;
    for (const log of this.#logs.values()) await log.close();
    this.#logs.clear();
  }

  #log(channel: string): ChannelLog {
    const log = this.#logs.get(channel);
    if (!log) throw new Error(`[@payhook/relay] no channel ${JSON.stringify(channel)} in this journal.`);
    return log;
  }
}
