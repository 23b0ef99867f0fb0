import { type FileHandle, mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Where a client keeps its place in a channel: the last sequence its app answered, and when.
 *
 * @example
 * const cursor: Cursor = { url: 'https://relay.example.com/out/alice', sequence: 42, deliveredAt: Date.now() };
 */
export interface Cursor {
  /** The channel's URL: a cursor is never used for another channel. */
  readonly url: string;
  readonly sequence: number;
  /** When the app last answered a delivery (ms since the epoch). */
  readonly deliveredAt: number | undefined;
}

/**
 * Loads and saves a {@link Cursor}.
 *
 * @example
 * const cursors: CursorStore = fileCursor('.payhook/alice.json');
 */
export interface CursorStore {
  load(): Promise<Cursor | undefined>;
  save(cursor: Cursor): Promise<void>;
  /** Releases what `save` holds open (a file). */
  close?(): Promise<void>;
}

/** The file opened for writing at any offset ('a+' creates it; 'r+' writes at the offsets given). */
function reopened(path: string): (created: FileHandle) => Promise<FileHandle> {
  return async (created) => {
    await created.close();
    return open(path, 'r+');
  };
}

/** The cursor's JSON padded to this many bytes: each save is one write over the whole previous one. */
const RECORD_BYTES = 512;

/**
 * A cursor in a JSON file, overwritten in place by one write of a fixed size, so a client killed at any moment
 * leaves the previous cursor or the new one. (One `pwrite` a delivery: renaming a temporary file cost 20 times
 * more, and a catch-up saves the cursor after every delivery.)
 *
 * @example
 * await connectRelay({ url, token, forwardTo, cursor: fileCursor(`${homedir()}/.payhook/relay/alice.json`) });
 */
export function fileCursor(path: string): CursorStore {
  let handle: Promise<FileHandle> | undefined;
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      let parsed: Partial<Cursor>;
      try {
        parsed = JSON.parse(text) as Partial<Cursor>;
      } catch {
        parsed = {};
      }
      if (typeof parsed.url !== 'string' || !Number.isSafeInteger(parsed.sequence)) {
        throw new Error(`[@payhook/relay] ${path} is not a relay cursor file: remove it to start again.`);
      }
      return { url: parsed.url, sequence: parsed.sequence!, deliveredAt: parsed.deliveredAt ?? undefined };
    },
    async save(cursor) {
      handle ??= mkdir(dirname(path), { recursive: true }).then(() => open(path, 'a+').then(reopened(path)));
      const file = await handle;
      const text = JSON.stringify(cursor);
      const record = Buffer.from(text.length < RECORD_BYTES ? `${text}\n`.padEnd(RECORD_BYTES) : `${text}\n`);
      await file.write(record, 0, record.length, 0);
      if (record.length > RECORD_BYTES) await file.truncate(record.length);
    },
    async close() {
      await (await handle)?.close();
      handle = undefined;
    },
  };
}

/**
 * A cursor in memory: for tests and one-off runs.
 *
 * @example
 * await connectRelay({ url, token, forwardTo, cursor: memoryCursor() });
 */
export function memoryCursor(initial?: Cursor): CursorStore {
  let current = initial;
  return {
    async load() {
      return current;
    },
    async save(cursor) {
      current = cursor;
    },
  };
}
