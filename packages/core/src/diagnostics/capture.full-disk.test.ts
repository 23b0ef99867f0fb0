import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { formBody, post, purchase, SECRET } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';
import { type CapturedDelivery, createCapture } from './capture.js';

const PAGE = 4096;

/** A 64 KiB tmpfs of its own (the test runs as root in CI), or why there is none. */
function smallDisk(): { dir: string; reason?: undefined } | { dir?: undefined; reason: string } {
  const dir = mkdtempSync(join(tmpdir(), `payhook-full-disk-${process.pid}-`));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'pipe' });
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
    `SKIPPED the full-disk capture tests: mounting a tmpfs failed (${disk.reason}); CI runs them.`,
  );
}
afterAll(() => {
  if (disk.dir === undefined) return;
  execFileSync('umount', [disk.dir]);
  rmSync(disk.dir, { recursive: true, force: true });
});

/** Writes a filler file until the disk refuses a page: only the free bytes of pages already taken remain. */
async function fillDisk(path: string): Promise<void> {
  const file = await open(path, 'w');
  try {
    for (;;) {
      const { bytesWritten } = await file.write(new Uint8Array(PAGE));
      if (bytesWritten < PAGE) return;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    await file.close();
  }
}

describe.skipIf(disk.dir === undefined)('createCapture on a full disk', () => {
  it('writes each line whole or not at all, reports ENOSPC once, answers every delivery, and goes on when space is back', async () => {
    const dir = disk.dir!;
    const path = join(dir, 'deliveries.jsonl');
    // A first line that leaves 100 bytes of its page free: the next line's write fits only in part.
    const first = JSON.stringify({ v: 1, at: '2026-11-20T10:00:00.000Z', status: 200, outcome: 'handled' });
    await writeFile(path, `${first.slice(0, -1)},"pad":"${'x'.repeat(PAGE - 100 - first.length - 10)}"}\n`);
    expect((await stat(path)).size).toBe(PAGE - 100);
    await fillDisk(join(dir, 'filler'));

    const warn = vi.fn();
    const capture = createCapture({ path, logger: { warn } });
    const webhook = createWebhookHandler({ secret: SECRET, capture, handle: () => {} });
    const deliver = async (id: string) =>
      (await webhook(post(formBody(purchase({ payment_id: id }))), undefined)).status;

    const statuses = [await deliver('p-full-1'), await deliver('p-full-2')];
    await capture.flush();
    expect(capture.failed).toBe(2);
    expect((await stat(path)).size).toBe(PAGE - 100);

    await rm(join(dir, 'filler'));
    statuses.push(await deliver('p-after'));
    await capture.flush();

    expect(statuses).toEqual([200, 200, 200]);
    expect(capture.failed).toBe(2);
    expect(warn.mock.calls).toEqual([
      ['[@payhook/core] a delivery could not be captured (ENOSPC); answers are not affected.'],
    ]);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.at(-1)).toBe('');
    const parsed = lines.slice(0, -1).map((line) => JSON.parse(line) as CapturedDelivery);
    expect(parsed.map((line) => line.notification?.payment_id ?? 'first')).toEqual(['first', 'p-after']);
  });
});
