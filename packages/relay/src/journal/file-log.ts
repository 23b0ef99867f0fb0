import { type FileHandle, mkdir, open } from 'node:fs/promises';
import type { JournalEntry, JournalEvent, ResolvedRetention } from './contract.js';
import { decodeRecord, encodeRecord } from './file-record.js';
import {
  loadSegments,
  offsetOf,
  readAt,
  recordAt,
  removeSegment,
  type Segment,
  segmentPaths,
} from './file-segments.js';

// One channel's append-only log. Appends waiting together are written with one `writev` and made durable with one
// `fdatasync` (group commit): each append's promise resolves only after that sync. Readers see synced records only,
// so a sequence a client was sent is never given to another delivery after a crash.

export interface LogLimits {
  readonly segmentEvents: number;
  readonly segmentBytes: number;
  readonly retention: ResolvedRetention;
}

interface Pending {
  readonly entry: JournalEntry;
  readonly resolve: (sequence: number) => void;
  readonly reject: (error: unknown) => void;
}

const READ_CHUNK = 256 * 1024;

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class ChannelLog {
  readonly #directory: string;
  readonly #limits: LogLimits;
  #segments: Segment[] = [];
  #log: FileHandle | undefined;
  #idx: FileHandle | undefined;
  #pending: Pending[] = [];
  #flushing = false;
  #broken: unknown;
  /** The last synced sequence: what readers may see. */
  last = 0;

  private constructor(directory: string, limits: LogLimits) {
    this.#directory = directory;
    this.#limits = limits;
  }

  /** Opens (or creates) a channel's log in `directory`, recovering its last segment. */
  static async open(directory: string, limits: LogLimits): Promise<ChannelLog> {
    const log = new ChannelLog(directory, limits);
    await mkdir(directory, { recursive: true });
    log.#segments = await loadSegments(directory);
    const tail = log.#segments.at(-1);
    log.last = tail ? tail.first + tail.count - 1 : 0;
    if (!tail) await log.#startSegment(1);
    else await log.#openTail(tail);
    return log;
  }

  get segments(): readonly Segment[] {
    return this.#segments;
  }

  append(entry: JournalEntry): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ entry, resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    while (this.#pending.length > 0) {
      const tail = this.#segments.at(-1)!;
      const room = this.#limits.segmentEvents - tail.count;
      if (this.#broken === undefined && (room <= 0 || tail.size >= this.#limits.segmentBytes)) {
        await this.#rotate().catch((error: unknown) => {
          this.#broken = error;
        });
        continue;
      }
      const batch = this.#pending.splice(0, Math.max(1, Math.min(room, 512)));
      try {
        if (this.#broken !== undefined) throw this.#broken;
        const first = await this.#write(
          tail,
          batch.map((pending) => pending.entry),
        );
        for (const [i, pending] of batch.entries()) pending.resolve(first + i);
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.#flushing = false;
  }

  /** Writes and syncs a batch into the tail segment; on failure cuts the files back to where they were. */
  async #write(tail: Segment, entries: readonly JournalEntry[]): Promise<number> {
    const first = this.last + 1;
    const buffers: Buffer[] = [];
    const offsets = Buffer.alloc(entries.length * 8);
    let size = tail.size;
    entries.forEach((entry, i) => {
      const record = encodeRecord({ ...entry, sequence: first + i });
      offsets.writeBigUInt64BE(BigInt(size), i * 8);
      buffers.push(...record);
      size += record.reduce((sum, part) => sum + part.length, 0);
    });
    try {
      const { bytesWritten } = await this.#log!.write(Buffer.concat(buffers), 0, size - tail.size, tail.size);
      if (bytesWritten !== size - tail.size) throw new Error('[@payhook/relay] a short write to the journal');
      await this.#log!.datasync();
      await this.#idx!.write(offsets, 0, offsets.length, tail.count * 8);
    } catch (error) {
      await this.#cutBack(tail);
      throw error;
    }
    tail.count += entries.length;
    tail.size = size;
    tail.lastReceivedAt = entries.at(-1)!.receivedAt;
    this.last = first + entries.length - 1;
    return first;
  }

  /** After a failed write: the files cut back to the last synced record, or the log marked broken until reopened. */
  async #cutBack(tail: Segment): Promise<void> {
    try {
      await this.#log!.truncate(tail.size);
      await this.#idx!.truncate(tail.count * 8);
    } catch (error) {
      this.#broken = error;
    }
  }

  async #openTail(tail: Segment): Promise<void> {
    this.#log = await open(tail.log, 'r+');
    this.#idx = await open(tail.idx, 'r+');
  }

  async #startSegment(first: number): Promise<void> {
    const paths = segmentPaths(this.#directory, first);
    this.#log = await open(paths.log, 'w+');
    this.#idx = await open(paths.idx, 'w+');
    await syncDirectory(this.#directory);
    this.#segments.push({ first, count: 0, size: 0, lastReceivedAt: 0, ...paths });
  }

  /** Closes the tail (its index synced, so a restart trusts it) and starts the next segment. */
  async #rotate(): Promise<void> {
    await this.#idx!.datasync();
    await this.#closeFiles();
    await this.#startSegment(this.last + 1);
  }

  async #closeFiles(): Promise<void> {
    await Promise.all([this.#log?.close(), this.#idx?.close()]);
    this.#log = undefined;
    this.#idx = undefined;
  }

  /** The first sequence retention keeps. */
  retainedFrom(now: number): number {
    const { maxEvents, maxAgeMs } = this.#limits.retention;
    const cutoff = now - maxAgeMs;
    const byCount = this.last - maxEvents + 1;
    const live = this.#segments.find((segment) => segment.count > 0 && segment.lastReceivedAt >= cutoff);
    const bySegment = live?.first ?? this.last + 1;
    return Math.max(1, byCount, bySegment, this.#segments[0]?.first ?? 1);
  }

  /**
   * The oldest retained sequence, exact: `retainedFrom` narrowed inside its segment by a binary search on arrival
   * times (deliveries are journaled in arrival order).
   */
  async oldest(now: number): Promise<number> {
    let low = this.retainedFrom(now);
    const segment = this.#segments.findLast((s) => s.first <= low);
    if (!segment || low > this.last) return Math.min(low, this.last + 1);
    const cutoff = now - this.#limits.retention.maxAgeMs;
    let high = Math.min(this.last, segment.first + segment.count - 1) + 1;
    const [log, idx] = await Promise.all([open(segment.log, 'r'), open(segment.idx, 'r')]);
    try {
      while (low < high) {
        const middle = Math.floor((low + high) / 2);
        const event = await recordAt(log, await offsetOf(idx, middle - segment.first));
        if (event.receivedAt >= cutoff) high = middle;
        else low = middle + 1;
      }
    } finally {
      await Promise.all([log.close(), idx.close()]);
    }
    return low;
  }

  /** Up to `limit` synced records with a sequence above `after`, oldest first, expired ones skipped. */
  async read(after: number, limit: number, now: number): Promise<JournalEvent[]> {
    const cutoff = now - this.#limits.retention.maxAgeMs;
    const events: JournalEvent[] = [];
    let next = Math.max(after + 1, this.retainedFrom(now));
    const end = this.last;
    while (events.length < limit && next <= end) {
      const segment = this.#segments.findLast((s) => s.first <= next);
      if (!segment || next >= segment.first + segment.count) break;
      const upTo = Math.min(end, segment.first + segment.count - 1, next + limit - events.length - 1);
      for (const event of await readRange(segment, next, upTo))
        if (event.receivedAt >= cutoff) events.push(event);
      next = upTo + 1;
    }
    return events;
  }

  /** Deletes closed segments retention no longer keeps; an expired tail is closed first so it can go too. */
  async prune(now: number): Promise<void> {
    const tail = this.#segments.at(-1)!;
    if (tail.count > 0 && tail.lastReceivedAt < now - this.#limits.retention.maxAgeMs && !this.#flushing) {
      this.#flushing = true;
      try {
        await this.#rotate();
      } finally {
        this.#flushing = false;
        if (this.#pending.length > 0) void this.#flush();
      }
    }
    const from = this.retainedFrom(now);
    while (this.#segments.length > 1 && this.#segments[0]!.first + this.#segments[0]!.count - 1 < from) {
      await removeSegment(this.#segments.shift()!);
    }
  }

  async close(): Promise<void> {
    while (this.#flushing) await new Promise((resolve) => setTimeout(resolve, 5));
    await this.#closeFiles();
  }
}

/** Records `from`..`to` of one segment, read in chunks from the offset its index gives. */
async function readRange(segment: Segment, from: number, to: number): Promise<JournalEvent[]> {
  const [log, idx] = await Promise.all([open(segment.log, 'r'), open(segment.idx, 'r')]);
  try {
    let offset = await offsetOf(idx, from - segment.first);
    const events: JournalEvent[] = [];
    while (events.length < to - from + 1) {
      const bytes = await readAt(log, offset, READ_CHUNK);
      let at = 0;
      for (let record = decodeRecord(bytes, at); record; record = decodeRecord(bytes, at)) {
        events.push(record.event);
        at += record.length;
        if (events.length === to - from + 1) break;
      }
      if (at === 0) {
        // One record larger than the chunk: read it whole.
        const whole = await readAt(log, offset, bytes.readUInt32BE(4) + bytes.readUInt32BE(8) + 12);
        const record = decodeRecord(whole, 0);
        if (!record) throw new Error('[@payhook/relay] a torn record inside a segment');
        events.push(record.event);
        at = record.length;
      }
      offset += at;
    }
    return events;
  } finally {
    await Promise.all([log.close(), idx.close()]);
  }
}
