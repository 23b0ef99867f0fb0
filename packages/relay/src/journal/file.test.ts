import { mkdtempSync, rmSync } from 'node:fs';
import { appendFile, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeJournal, entry } from '../../test/journal-suite.js';
import { FileJournal } from './file.js';

const root = mkdtempSync(join(tmpdir(), 'payhook-relay-file-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;
let current = '';

describeJournal('FileJournal', {
  open: (setup) => {
    current = join(root, `j${++count}`);
    return FileJournal.open({ directory: current, ...setup });
  },
  reopen: (setup) => FileJournal.open({ directory: current, ...setup }),
});

const record = { name: 'alice', tokenHash: 'hash', createdAt: 1 };

async function fresh(options: { segmentEvents?: number; retention?: { maxEvents?: number } } = {}) {
  const directory = join(root, `f${++count}`);
  const journal = await FileJournal.open({ directory, ...options });
  await journal.createChannel(record);
  return { directory, journal, channelDir: join(directory, 'channels', 'alice') };
}

describe('FileJournal on disk', () => {
  it('cuts a torn last write off on open: the acknowledged deliveries stay, the next sequence follows them', async () => {
    const { directory, journal, channelDir } = await fresh();
    for (let n = 1; n <= 3; n++) await journal.append('alice', entry(n));
    await journal.close();
    const log = join(channelDir, '0000000000000001.log');
    const whole = (await stat(log)).size;
    // What a process killed in the middle of a write leaves: a record's header and part of its meta.
    await appendFile(
      log,
      Buffer.concat([Buffer.from('PHR1'), Buffer.from([0, 0, 0, 90, 0, 0, 6, 130]), Buffer.from('{"s":4,')]),
    );
    const reopened = await FileJournal.open({ directory });
    expect((await stat(log)).size).toBe(whole);
    expect((await reopened.read('alice', 0, 10)).map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(await reopened.append('alice', entry(4))).toBe(4);
    expect((await reopened.read('alice', 3, 10)).map((e) => e.sha256)).toEqual([entry(4).sha256]);
    await reopened.close();
  });

  it('drops a last record whose body does not match its SHA-256 (a torn body)', async () => {
    const { directory, journal, channelDir } = await fresh();
    await journal.append('alice', entry(1));
    await journal.close();
    const log = join(channelDir, '0000000000000001.log');
    const good = (await stat(log)).size;
    const torn = entry(2);
    const meta = Buffer.from(
      JSON.stringify({ s: 2, t: torn.receivedAt, m: torn.mediaType, f: torn.sender, h: torn.sha256 }),
    );
    const header = Buffer.alloc(12);
    header.write('PHR1');
    header.writeUInt32BE(meta.length, 4);
    header.writeUInt32BE(torn.body.length, 8);
    const damaged = Buffer.from(torn.body);
    damaged[10] = damaged[10]! ^ 0xff;
    await appendFile(log, Buffer.concat([header, meta, damaged]));
    const reopened = await FileJournal.open({ directory });
    expect((await reopened.read('alice', 0, 10)).map((e) => e.sequence)).toEqual([1]);
    expect((await stat(log)).size).toBe(good);
    await reopened.close();
  });

  it('rolls segments over and deletes whole ones retention no longer keeps', async () => {
    const { directory, journal, channelDir } = await fresh({
      segmentEvents: 10,
      retention: { maxEvents: 12 },
    });
    for (let n = 1; n <= 35; n++) await journal.append('alice', entry(n));
    await journal.prune();
    const logs = (await readdir(channelDir)).filter((name) => name.endsWith('.log')).sort();
    expect(logs).toEqual(['0000000000000021.log', '0000000000000031.log']);
    expect((await journal.read('alice', 0, 100)).map((e) => e.sequence)).toEqual(
      Array.from({ length: 12 }, (_, i) => 24 + i),
    );
    await journal.close();
    const reopened = await FileJournal.open({ directory, segmentEvents: 10, retention: { maxEvents: 12 } });
    expect(await reopened.stats('alice')).toMatchObject({ last: 35, oldest: 24 });
    expect((await reopened.read('alice', 29, 3)).map((e) => e.sequence)).toEqual([30, 31, 32]);
    await reopened.close();
  });

  it('reads across segments from any cursor, and a body larger than a read chunk whole', async () => {
    const { journal } = await fresh({ segmentEvents: 4 });
    const big = new Uint8Array(300 * 1024).fill(7);
    for (let n = 1; n <= 9; n++)
      await journal.append('alice', n === 6 ? { ...entry(6), body: big } : entry(n));
    expect((await journal.read('alice', 2, 5)).map((e) => e.sequence)).toEqual([3, 4, 5, 6, 7]);
    const [six] = await journal.read('alice', 5, 1);
    expect(six!.body.length).toBe(big.length);
    await journal.close();
  });
});
