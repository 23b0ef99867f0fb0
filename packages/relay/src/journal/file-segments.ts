import { createHash } from 'node:crypto';
import { type FileHandle, open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { JournalEvent } from './contract.js';
import { decodeRecord, HEADER_BYTES, headerAt } from './file-record.js';

// A channel's segments on disk: `<first sequence>.log` (the records) beside `<first sequence>.idx` (each record's
// offset in the log, 8 bytes, so a read starts at its sequence without scanning). Only this list is in memory.

/** One segment: where it starts, how many records it has, and the arrival time of its last. */
export interface Segment {
  readonly first: number;
  count: number;
  size: number;
  lastReceivedAt: number;
  readonly log: string;
  readonly idx: string;
}

const NAME = /^(\d{16})\.log$/;

export function segmentPaths(directory: string, first: number): { log: string; idx: string } {
  const base = join(directory, String(first).padStart(16, '0'));
  return { log: `${base}.log`, idx: `${base}.idx` };
}

/** Reads `length` bytes at `position` (fewer at the end of the file). */
export async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return bytesRead === length ? buffer : buffer.subarray(0, bytesRead);
}

/** The offset of a segment's `index`-th record, from its index file. */
export async function offsetOf(idx: FileHandle, index: number): Promise<number> {
  const bytes = await readAt(idx, index * 8, 8);
  if (bytes.length < 8) throw new Error(`[@payhook/relay] the index has no entry ${index}`);
  return Number(bytes.readBigUInt64BE(0));
}

/** The whole record at `offset` (one read for its header, one for the rest). */
export async function recordAt(log: FileHandle, offset: number): Promise<JournalEvent> {
  const head = await readAt(log, offset, HEADER_BYTES);
  const sizes = headerAt(head, 0);
  if (!sizes) throw new Error('[@payhook/relay] no record at this offset');
  const whole = await readAt(log, offset, HEADER_BYTES + sizes.meta + sizes.body);
  const record = decodeRecord(whole, 0);
  if (!record) throw new Error('[@payhook/relay] a torn record inside a segment');
  return record.event;
}

function intact(event: JournalEvent): boolean {
  return createHash('sha256').update(event.body).digest('base64url') === event.sha256;
}

/**
 * Scans the last segment after a restart: the records that are whole and match their SHA-256. Whatever follows
 * (a write torn by a crash, never acknowledged) is cut off, and the index is rewritten to match.
 */
async function recoverLast(segment: Segment): Promise<void> {
  const log = await open(segment.log, 'r+');
  const offsets: Buffer[] = [];
  try {
    const bytes = await log.readFile();
    let at = 0;
    let last: JournalEvent | undefined;
    for (;;) {
      const record = decodeRecord(bytes, at);
      if (!record || record.event.sequence !== segment.first + offsets.length || !intact(record.event)) break;
      const entry = Buffer.alloc(8);
      entry.writeBigUInt64BE(BigInt(at));
      offsets.push(entry);
      at += record.length;
      last = record.event;
    }
    if (at < bytes.length) {
      await log.truncate(at);
      await log.datasync();
    }
    segment.count = offsets.length;
    segment.size = at;
    segment.lastReceivedAt = last?.receivedAt ?? 0;
  } finally {
    await log.close();
  }
  const idx = await open(segment.idx, 'w');
  try {
    await idx.writeFile(Buffer.concat(offsets));
    await idx.datasync();
  } finally {
    await idx.close();
  }
}

/** A closed segment as its files say (its index was synced when it was closed). */
async function describeClosed(segment: Segment): Promise<void> {
  segment.count = (await stat(segment.idx)).size / 8;
  segment.size = (await stat(segment.log)).size;
  if (segment.count === 0) return;
  const [log, idx] = await Promise.all([open(segment.log, 'r'), open(segment.idx, 'r')]);
  try {
    segment.lastReceivedAt = (await recordAt(log, await offsetOf(idx, segment.count - 1))).receivedAt;
  } finally {
    await Promise.all([log.close(), idx.close()]);
  }
}

/** A channel's segments in order, the last one recovered from a crash. */
export async function loadSegments(directory: string): Promise<Segment[]> {
  const firsts = (await readdir(directory))
    .map((name) => NAME.exec(name)?.[1])
    .filter((first): first is string => first !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  const segments = firsts.map((first) => ({
    first,
    count: 0,
    size: 0,
    lastReceivedAt: 0,
    ...segmentPaths(directory, first),
  }));
  for (const [i, segment] of segments.entries()) {
    if (i === segments.length - 1) await recoverLast(segment);
    else await describeClosed(segment);
  }
  return segments;
}

/** Deletes a segment's two files. */
export async function removeSegment(segment: Segment): Promise<void> {
  await rm(segment.log, { force: true });
  await rm(segment.idx, { force: true });
}
