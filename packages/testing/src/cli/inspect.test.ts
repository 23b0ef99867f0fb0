import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectCommand } from './inspect.js';
import { memoryIO } from './io.js';

describe('payhook inspect', () => {
  let dir: string;
  let capture: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'payhook-inspect-cli-'));
    capture = join(dir, 'deliveries.jsonl');
    await writeFile(capture, '');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prints the address with its token, serves the page until stopped, and exits 0', async () => {
    const { io, out, err } = memoryIO('', {});
    const stop = new AbortController();
    const done = inspectCommand([capture], io, stop.signal);
    await expect.poll(() => out.length).toBeGreaterThan(0);
    const url = /^payhook inspect: open (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32})$/.exec(out[0]!)?.[1];
    expect(url).toBeDefined();
    expect(out[1]).toBe('replay is off: pass --resign SECRET (the test secret) or set PAYHOOK_SECRET.');
    expect((await fetch(url!)).status).toBe(200);
    expect((await fetch(url!.replace(/\?token=.*/, ''))).status).toBe(403);
    stop.abort();
    expect(await done).toBe(0);
    expect(err).toEqual([]);
  });

  it.each([
    [[], 'name a capture file, or a running fake service with --fake-service URL.'],
    [['a', 'b'], 'name at most one capture file.'],
    [
      ['--fake-service', 'http://127.0.0.1:1'],
      '--fake-service needs --endpoints-key KEY (or PAYHOOK_ENDPOINTS_KEY), as payhook serve printed it.',
    ],
  ])('refuses %j with exit 2: %s', async (argv, message) => {
    const { io, err } = memoryIO('', {});
    expect(await inspectCommand(argv, io, AbortSignal.abort())).toBe(2);
    expect(err.join('\n')).toContain(message);
  });
});
