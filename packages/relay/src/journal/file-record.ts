import type { JournalEvent } from './contract.js';

// One record of a segment file: `PHR1`, the meta's length, the body's length (u32 big-endian each), the meta as
// JSON, then the body's bytes as received. The meta holds the body's SHA-256, so a torn record is found on open.

const MAGIC = 0x50485231; // 'PHR1'
export const HEADER_BYTES = 12;

interface Meta {
  s: number;
  t: number;
  m: string;
  f: string;
  h: string;
}

/** The record's bytes: header, meta, body. */
export function encodeRecord(event: JournalEvent): Buffer[] {
  const meta = Buffer.from(
    JSON.stringify({
      s: event.sequence,
      t: event.receivedAt,
      m: event.mediaType,
      f: event.sender,
      h: event.sha256,
    }),
  );
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(MAGIC, 0);
  header.writeUInt32BE(meta.length, 4);
  header.writeUInt32BE(event.body.byteLength, 8);
  return [header, meta, Buffer.from(event.body.buffer, event.body.byteOffset, event.body.byteLength)];
}

/** The sizes a record's header announces, or undefined when these bytes are not a record's header. */
export function headerAt(bytes: Buffer, at: number): { meta: number; body: number } | undefined {
  if (bytes.length - at < HEADER_BYTES || bytes.readUInt32BE(at) !== MAGIC) return undefined;
  return { meta: bytes.readUInt32BE(at + 4), body: bytes.readUInt32BE(at + 8) };
}

/**
 * The record at `at` in `bytes`, with its length in bytes; `undefined` when the bytes hold no whole record
 * there (the end of what was read, or a torn write).
 */
export function decodeRecord(bytes: Buffer, at: number): { event: JournalEvent; length: number } | undefined {
  const sizes = headerAt(bytes, at);
  if (!sizes) return undefined;
  const length = HEADER_BYTES + sizes.meta + sizes.body;
  if (bytes.length - at < length) return undefined;
  let meta: Meta;
  try {
    meta = JSON.parse(bytes.toString('utf8', at + HEADER_BYTES, at + HEADER_BYTES + sizes.meta)) as Meta;
  } catch {
    return undefined;
  }
  const bodyStart = at + HEADER_BYTES + sizes.meta;
  const event: JournalEvent = {
    sequence: meta.s,
    receivedAt: meta.t,
    mediaType: meta.m,
    sender: meta.f,
    sha256: meta.h,
    body: new Uint8Array(bytes.subarray(bodyStart, bodyStart + sizes.body)),
  };
  return { event, length };
}
