import { afterEach, describe, expect, it } from 'vitest';
import type { Journal, JournalEntry, Retention } from '../src/index.js';
import { delivery, digest, SERVICE } from './kit.js';

/** What a journal under test is opened with. */
interface JournalSetup {
  retention?: Retention;
  now?: () => number;
}

/**
 * A journal kind under test: `open` makes a fresh, empty one; `reopen` (for durable kinds) opens the same storage
 * again, as a restarted relay does, after the first was closed.
 */
export interface JournalKind {
  open(setup?: JournalSetup): Promise<Journal>;
  reopen?(setup?: JournalSetup): Promise<Journal>;
}

export function entry(n: number, receivedAt = Date.now()): JournalEntry {
  const body = new TextEncoder().encode(delivery(n));
  return {
    receivedAt,
    mediaType: 'application/x-www-form-urlencoded',
    sender: SERVICE,
    sha256: digest(body),
    body,
  };
}

const record = (name: string) => ({ name, tokenHash: `hash-of-${name}`, createdAt: 1_700_000_000_000 });

/** The contract every journal keeps (docs/relay.md promises it for each). */
export function describeJournal(name: string, kind: JournalKind): void {
  describe(`${name}: the journal contract`, () => {
    const opened: Journal[] = [];
    const open = async (setup?: JournalSetup) => {
      const journal = await kind.open(setup);
      opened.push(journal);
      return journal;
    };
    afterEach(async () => {
      for (const journal of opened.splice(0)) await journal.close();
    });

    it('creates a channel once and finds it by name and by token hash', async () => {
      const journal = await open();
      expect(await journal.createChannel(record('alice'))).toBe(true);
      expect(await journal.createChannel({ ...record('alice'), tokenHash: 'other' })).toBe(false);
      expect(await journal.findChannel('alice')).toEqual(record('alice'));
      expect(await journal.findChannelByToken('hash-of-alice')).toEqual(record('alice'));
      expect(await journal.findChannel('bob')).toBeUndefined();
      expect(await journal.findChannelByToken('hash-of-bob')).toBeUndefined();
    });

    it('gives sequences 1, 2, 3… and reads back the exact bytes, media type, sender and arrival, in order', async () => {
      const journal = await open();
      await journal.createChannel(record('alice'));
      const entries = [1, 2, 3].map((n) => entry(n, 1_800_000_000_000 + n));
      for (const [i, e] of entries.entries()) expect(await journal.append('alice', e)).toBe(i + 1);
      const read = await journal.read('alice', 0, 10);
      expect(read.map((e) => e.sequence)).toEqual([1, 2, 3]);
      for (const [i, e] of read.entries()) {
        expect(Buffer.from(e.body).toString()).toBe(delivery(i + 1));
        expect(e).toMatchObject({
          mediaType: entries[i]!.mediaType,
          sender: SERVICE,
          sha256: entries[i]!.sha256,
          receivedAt: entries[i]!.receivedAt,
        });
      }
      expect((await journal.read('alice', 1, 1)).map((e) => e.sequence)).toEqual([2]);
      expect(await journal.read('alice', 3, 10)).toEqual([]);
    });

    it('gives 50 appends made at once 50 distinct sequences, each with its own body', async () => {
      const journal = await open();
      await journal.createChannel(record('alice'));
      const sequences = await Promise.all(
        Array.from({ length: 50 }, (_, i) => journal.append('alice', entry(i))),
      );
      expect([...sequences].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      const read = await journal.read('alice', 0, 100);
      for (const event of read) {
        const n = sequences.indexOf(event.sequence);
        expect(Buffer.from(event.body).toString()).toBe(delivery(n));
      }
    });

    it('keeps channels apart: sequences and reads per channel', async () => {
      const journal = await open();
      await journal.createChannel(record('alice'));
      await journal.createChannel(record('bob'));
      await journal.append('alice', entry(1));
      expect(await journal.append('bob', entry(2))).toBe(1);
      expect(await journal.append('alice', entry(3))).toBe(2);
      expect((await journal.read('bob', 0, 10)).map((e) => e.sha256)).toEqual([entry(2).sha256]);
      expect((await journal.stats('bob')).last).toBe(1);
    });

    it('reports last, oldest and the last arrival', async () => {
      const journal = await open();
      await journal.createChannel(record('alice'));
      expect(await journal.stats('alice')).toEqual({ last: 0, oldest: 1, lastReceivedAt: undefined });
      await journal.append('alice', entry(1, 1_800_000_000_000));
      await journal.append('alice', entry(2, 1_800_000_000_500));
      expect(await journal.stats('alice')).toEqual({ last: 2, oldest: 1, lastReceivedAt: 1_800_000_000_500 });
    });

    it('keeps only the newest maxEvents: older ones are never read again, and sequences go on', async () => {
      const journal = await open({ retention: { maxEvents: 3 } });
      await journal.createChannel(record('alice'));
      for (let n = 1; n <= 5; n++) await journal.append('alice', entry(n));
      expect((await journal.read('alice', 0, 10)).map((e) => e.sequence)).toEqual([3, 4, 5]);
      expect(await journal.stats('alice')).toMatchObject({ last: 5, oldest: 3 });
      expect(await journal.append('alice', entry(6))).toBe(6);
    });

    it('keeps deliveries for maxAgeMs: older ones are never read again', async () => {
      let now = 1_800_000_000_000;
      const journal = await open({ retention: { maxAgeMs: 60_000 }, now: () => now });
      await journal.createChannel(record('alice'));
      await journal.append('alice', entry(1, now));
      await journal.append('alice', entry(2, now + 30_000));
      now += 70_000;
      expect((await journal.read('alice', 0, 10)).map((e) => e.sequence)).toEqual([2]);
      expect(await journal.stats('alice')).toMatchObject({ last: 2, oldest: 2 });
      now += 30_000;
      expect(await journal.read('alice', 0, 10)).toEqual([]);
      expect(await journal.stats('alice')).toEqual({ last: 2, oldest: 3, lastReceivedAt: undefined });
    });

    if (kind.reopen) {
      const reopen = kind.reopen.bind(kind);
      it('keeps channels and deliveries across a restart, and the next sequence follows the last', async () => {
        const first = await kind.open();
        await first.createChannel(record('alice'));
        for (let n = 1; n <= 3; n++) await first.append('alice', entry(n));
        await first.close();
        const second = await reopen();
        opened.push(second);
        expect(await second.findChannelByToken('hash-of-alice')).toEqual(record('alice'));
        expect((await second.read('alice', 0, 10)).map((e) => e.sha256)).toEqual(
          [1, 2, 3].map((n) => entry(n).sha256),
        );
        expect(await second.append('alice', entry(4))).toBe(4);
      });
    }
  });
}
