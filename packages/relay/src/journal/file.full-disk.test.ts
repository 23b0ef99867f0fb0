import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { channel, deliver, delivery, poll, relayOver } from '../../test/kit.js';
import type { RelayEvent } from '../wire.js';
import { FileJournal } from './file.js';

/** A 128 KiB tmpfs of its own (the tests run as root in CI), or why there is none. */
function smallDisk(): { dir: string; reason?: undefined } | { dir?: undefined; reason: string } {
  const dir = mkdtempSync(join(tmpdir(), `payhook-relay-full-${process.pid}-`));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=128k', 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: String((error as { stderr?: unknown }).stderr ?? error).trim() };
  }
}

const disk = smallDisk();
if (disk.reason !== undefined) {
  if (process.env.CI === 'true')
    throw new Error(`a full disk cannot be tested: mount failed (${disk.reason})`);
  console.warn(
    `SKIPPED the relay's full-disk tests: mounting a tmpfs failed (${disk.reason}); CI runs them.`,
  );
}
afterAll(() => {
  if (disk.dir === undefined) return;
  execFileSync('umount', [disk.dir]);
  rmSync(disk.dir, { recursive: true, force: true });
});

/** Fills the disk with `path` until a write is refused. */
async function fill(path: string): Promise<void> {
  const file = await open(path, 'w');
  try {
    for (;;) {
      const { bytesWritten } = await file.write(new Uint8Array(1024));
      if (bytesWritten < 1024) return;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    await file.close();
  }
}

describe.skipIf(disk.dir === undefined)('the file journal on a full disk', () => {
  it('answers 503 (never 200) while the write fails, spends no sequence, and goes on once space is back', async () => {
    const directory = join(disk.dir!, 'journal');
    const journal = await FileJournal.open({ directory });
    const relay = relayOver(journal);
    const { token } = await channel(relay, 'alice');
    expect((await deliver(relay, 'alice', delivery(1))).status).toBe(200);
    const filler = join(disk.dir!, 'filler');
    await fill(filler);
    const big = `${delivery(2)}&pad=${'x'.repeat(8_000)}`;
    for (let i = 0; i < 3; i++) {
      const refused = await deliver(relay, 'alice', big);
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('journal.unavailable');
    }
    await rm(filler);
    const accepted = await deliver(relay, 'alice', big);
    expect(await accepted.json()).toEqual({ ok: true, sequence: 2 });
    await relay.close();
    const reopened = relayOver(await FileJournal.open({ directory }));
    const { events } = (await (await poll(reopened, 'alice', token)).json()) as { events: RelayEvent[] };
    expect(events.map((e) => e.sequence)).toEqual([1, 2]);
    expect(Buffer.from(events[1]!.body, 'base64url').toString()).toBe(big);
    await reopened.close();
  });
});
