import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
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
}

/**
 * A cursor in a JSON file, replaced atomically (written beside it, then renamed), so a client killed at any
 * moment leaves the previous cursor or the new one.
 *
 * @example
 * await connectRelay({ url, token, forwardTo, cursor: fileCursor(`${homedir()}/.payhook/relay/alice.json`) });
 */
export function fileCursor(path: string): CursorStore {
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      const parsed = JSON.parse(text) as Partial<Cursor>;
      if (typeof parsed.url !== 'string' || !Number.isSafeInteger(parsed.sequence)) {
        throw new Error(`[@payhook/relay] ${path} is not a relay cursor file: remove it to start again.`);
      }
      return { url: parsed.url, sequence: parsed.sequence!, deliveredAt: parsed.deliveredAt ?? undefined };
    },
    async save(cursor) {
      await mkdir(dirname(path), { recursive: true });
      const temporary = `${path}.${process.pid}.tmp`;
      await writeFile(temporary, `${JSON.stringify(cursor)}\n`);
      await rename(temporary, path);
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
