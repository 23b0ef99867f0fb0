import { type FSWatcher, watch } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import {
  type InspectedDelivery,
  readCaptureLine,
  readFakeAttempt,
  type UnreadableLine,
} from './deliveries.js';

/** Everything the inspector has read so far, in arrival order. */
export interface DeliveryLog {
  readonly deliveries: InspectedDelivery[];
  readonly unreadable: UnreadableLine[];
}

/** A source the inspector reads again and again (on its own, every second): what arrived since the last read. */
export interface DeliverySource {
  read(log: DeliveryLog): Promise<void>;
  /** Lets go of what the source holds open (a capture file). */
  close?(): Promise<void>;
}

const CHUNK = 1 << 20;
/** A line longer than this is no captured delivery (core caps a body at 1 MiB): dropped up to its newline. */
const MAX_LINE = 16 << 20;
/** The first bytes of a file, kept to notice a file truncated and written again past the offset between reads. */
const HEAD = 64;

/** One opened capture file and how far it was read. */
interface OpenFile {
  readonly handle: FileHandle;
  readonly ino: number;
  readonly dev: number;
  offset: number;
  line: number;
  pending: Buffer;
  skipping: boolean;
  head: Buffer;
  /** The `<path>.1` there was when this file was opened: older than it, never to be read after it. */
  older?: { ino: number; dev: number } | undefined;
}

async function openCapture(path: string): Promise<OpenFile> {
  const handle = await open(path, 'r');
  const { ino, dev } = await handle.stat();
  return {
    handle,
    ino,
    dev,
    offset: 0,
    line: 0,
    pending: Buffer.alloc(0),
    skipping: false,
    head: Buffer.alloc(0),
  };
}

/** Reads `file` from its offset to its end, whole lines only (a line still being written waits for its newline). */
async function readToEnd(file: OpenFile, log: DeliveryLog): Promise<void> {
  const { size } = await file.handle.stat();
  if (size < file.offset || !(await sameHead(file, size))) {
    Object.assign(file, {
      offset: 0,
      line: 0,
      pending: Buffer.alloc(0),
      skipping: false,
      head: Buffer.alloc(0),
    });
  }
  while (file.offset < size) {
    const chunk = Buffer.alloc(Math.min(CHUNK, size - file.offset));
    const { bytesRead } = await file.handle.read(chunk, 0, chunk.length, file.offset);
    if (bytesRead === 0) break;
    if (file.offset < HEAD) {
      file.head = Buffer.concat([file.head, chunk.subarray(0, Math.min(bytesRead, HEAD - file.offset))]);
    }
    file.offset += bytesRead;
    file.pending = Buffer.concat([file.pending, chunk.subarray(0, bytesRead)]);
    let end = file.pending.indexOf(10);
    if (end === -1 && file.pending.length > MAX_LINE) {
      if (!file.skipping) log.unreadable.push({ line: file.line + 1, reason: 'longer than 16 MiB' });
      file.skipping = true;
      file.pending = Buffer.alloc(0);
      continue;
    }
    while (end !== -1) {
      const raw = file.pending.subarray(0, end).toString('utf8').trim();
      file.pending = file.pending.subarray(end + 1);
      file.line += 1;
      if (file.skipping) file.skipping = false;
      else if (raw !== '') {
        const read = readCaptureLine(raw, file.line, log.deliveries.length);
        if ('id' in read) log.deliveries.push(read);
        else log.unreadable.push(read);
      }
      end = file.pending.indexOf(10);
    }
  }
}

/** Whether the file still starts with the bytes read from it first: one truncated and written again does not. */
async function sameHead(file: OpenFile, size: number): Promise<boolean> {
  if (file.head.length === 0 || size < file.head.length) return true;
  const now = Buffer.alloc(file.head.length);
  await file.handle.read(now, 0, now.length, 0);
  return now.equals(file.head);
}

/** A rotated file read to its end: a line it ends without a newline was torn, and no later write finishes it. */
async function finish(file: OpenFile, log: DeliveryLog): Promise<void> {
  try {
    await readToEnd(file, log);
    if (file.pending.length > 0 && !file.skipping) {
      log.unreadable.push({ line: file.line + 1, reason: 'a torn line at the end of a rotated file' });
    }
  } finally {
    await file.handle.close();
  }
}

function missing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * A capture file followed as it grows. The file stays open between reads, so a rotation never loses a delivery:
 * when `path` names another file, the one held is read to its end first, then `<path>.1` if a second rotation
 * came between two reads (core's `createCapture` renames to `<path>.1`), then the new file from its start. A file
 * that shrank or starts with other bytes was truncated: it is read again from its start.
 */
export function followCapture(path: string): DeliverySource {
  let current: OpenFile | undefined;
  let opened = false;
  return {
    async read(log) {
      let named: { ino: number; dev: number } | undefined;
      try {
        named = await stat(path);
      } catch (error) {
        if (!missing(error)) throw error;
      }
      if (
        current !== undefined &&
        (named === undefined || named.ino !== current.ino || named.dev !== current.dev)
      ) {
        const rotated = current;
        current = undefined;
        await finish(rotated, log);
        await readSecondRotation(`${path}.1`, rotated, named, log);
      }
      if (named === undefined) {
        if (!opened) {
          throw new Error(
            `the capture file ${path} does not exist (yet): nothing to show until something writes it. Is the path right?`,
          );
        }
        return;
      }
      if (current === undefined) {
        const older = await stat(`${path}.1`).catch(() => undefined);
        current = await openCapture(path).catch((error: unknown) => {
          if (missing(error)) return undefined;
          throw error;
        });
        if (current !== undefined) current.older = older;
      }
      if (current === undefined) return;
      opened = true;
      await readToEnd(current, log);
    },
    async close() {
      await current?.handle.close();
      current = undefined;
    },
  };
}

/** `<path>.1` when it is neither the file just finished nor the one now at `path`: a rotation never opened. */
async function readSecondRotation(
  older: string,
  finished: OpenFile,
  named: { ino: number; dev: number } | undefined,
  log: DeliveryLog,
): Promise<void> {
  let file: OpenFile;
  try {
    file = await openCapture(older);
  } catch (error) {
    if (missing(error)) return;
    throw error;
  }
  const seen = (f: { ino: number; dev: number } | undefined) =>
    f !== undefined && f.ino === file.ino && f.dev === file.dev;
  if (seen(finished) || seen(named) || seen(finished.older)) await file.handle.close();
  else await finish(file, log);
}

/**
 * The delivery attempts of a running fake service (`payhook serve`, `startFakeServer`) through its admin route,
 * which needs the project's endpoints key.
 */
export function followFakeService(base: URL, endpointsKey: string, timeoutMs = 5_000): DeliverySource {
  let seen = 0;
  return {
    async read(log) {
      const response = await fetch(new URL('/__payhook/deliveries', base), {
        headers: { 'x-api-key': endpointsKey },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) {
        throw new Error(
          `the fake service answered ${response.status} to GET /__payhook/deliveries (check --endpoints-key)`,
        );
      }
      const attempts = (await response.json()) as Record<string, unknown>[];
      for (const attempt of attempts.slice(seen))
        log.deliveries.push(readFakeAttempt(attempt, log.deliveries.length));
      seen = Math.max(seen, attempts.length);
    },
  };
}

/** Calls `changed` on every change in the capture's folder to its file or `<file>.1`; nothing where none can be watched. */
export function watchCapture(path: string, changed: () => void): FSWatcher | undefined {
  const name = basename(path);
  try {
    const watcher = watch(dirname(resolve(path)), { persistent: false }, (_event, file) => {
      if (file === null || file === name || file === `${name}.1`) changed();
    });
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    // No folder yet, or no file watching here: the reads every second remain.
    return undefined;
  }
}
