import { appendFile, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCapture } from '@payhook/core/capture';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakePurchase } from '../fixtures/primary.js';
import { type DeliveryLog, followCapture } from './sources.js';

function line(order: string): string {
  const notification = fakePurchase({ order_id: order }, { seed: order });
  return `${JSON.stringify({ v: 1, at: '2026-11-26T10:00:00.000Z', status: 200, outcome: 'handled', notification })}\n`;
}
const lines = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => line(`o-${from + i}`)).join('');
const orders = (log: DeliveryLog) => log.deliveries.map((d) => d.order);
const emptyLog = (): DeliveryLog => ({ deliveries: [], unreadable: [] });

describe('followCapture', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'payhook-inspect-sources-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('loses no delivery when the file is rotated between two reads and the new one outgrows the old offset', async () => {
    const path = join(dir, 'rotated.jsonl');
    await writeFile(path, lines(1, 4));
    const source = followCapture(path);
    const log = emptyLog();
    await source.read(log);
    expect(orders(log)).toHaveLength(4);
    // Written before the rotation but not read yet, then the file is renamed and a longer one takes its place.
    await appendFile(path, lines(5, 6));
    await rename(path, `${path}.1`);
    await writeFile(path, lines(7, 12));
    await source.read(log);
    expect(orders(log)).toEqual(Array.from({ length: 12 }, (_, i) => `o-${i + 1}`));
    expect(log.unreadable).toEqual([]);
  });

  it("loses no delivery across core's own rotations, twice between two reads", async () => {
    const path = join(dir, 'captured.jsonl');
    const capture = createCapture({ path, maxBytes: 2_500, logger: false });
    const source = followCapture(path);
    const log = emptyLog();
    const record = async (from: number, to: number) => {
      for (let i = from; i <= to; i++) {
        const notification = fakePurchase({ order_id: `c-${i}` }, { seed: `c-${i}` });
        capture.record({ headers: { 'content-type': 'application/x-www-form-urlencoded' } }, {
          status: 200,
          outcome: 'handled',
          headers: {},
          body: '',
          notification: { raw: notification },
        } as never);
        await capture.flush();
      }
    };
    await record(1, 1);
    await source.read(log);
    await record(2, 3);
    await source.read(log);
    expect(orders(log)).toEqual(['c-1', 'c-2', 'c-3']);
    await record(4, 6);
    await source.read(log);
    expect(orders(log)).toEqual(['c-1', 'c-2', 'c-3', 'c-4', 'c-5', 'c-6']);
  });

  it('never reads a <path>.1 older than the file it started on', async () => {
    const path = join(dir, 'started-late.jsonl');
    await writeFile(`${path}.1`, lines(1, 3));
    await writeFile(path, lines(4, 5));
    const source = followCapture(path);
    const log = emptyLog();
    await source.read(log);
    await appendFile(path, lines(6, 6));
    await rm(path);
    await writeFile(path, lines(7, 7));
    await source.read(log);
    expect(orders(log)).toEqual(['o-4', 'o-5', 'o-6', 'o-7']);
    await source.close?.();
  });

  it('names a capture file that does not exist, and reads it once it appears', async () => {
    const path = join(dir, 'later.jsonl');
    const source = followCapture(path);
    const log = emptyLog();
    await expect(source.read(log)).rejects.toThrow(
      `the capture file ${path} does not exist (yet): nothing to show until something writes it. Is the path right?`,
    );
    await writeFile(path, lines(1, 2));
    await source.read(log);
    expect(orders(log)).toEqual(['o-1', 'o-2']);
  });
});
