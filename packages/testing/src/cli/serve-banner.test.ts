import { describe, expect, it } from 'vitest';
import { memoryIO } from './io.js';
import { serveCommand } from './serve.js';

/** The banner `payhook serve` prints with `flags`, up to and including its `listening on` line. */
async function banner(flags: string[]): Promise<string[]> {
  const { io, out } = memoryIO();
  const stop = new AbortController();
  const done = serveCommand(['--port', '0', '--secret', 's', '--seed', '3', ...flags], io, stop.signal);
  for (let i = 0; i < 500 && !out.some((l) => l.startsWith('listening on ')); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  stop.abort();
  expect(await done).toBe(0);
  return out;
}

describe('payhook serve banner', () => {
  it('says webhooks are signed with SHA-256 by default and names --algorithm sha1', async () => {
    expect(await banner([])).toContain(
      'webhooks: signed with SHA-256 (the spec, 44 characters); public plugins verify SHA-1: restart with --algorithm sha1',
    );
  });

  it('says SHA-1 when run with --algorithm sha1', async () => {
    expect(await banner(['--algorithm', 'sha1'])).toContain(
      'webhooks: signed with SHA-1 (28 characters, --algorithm sha1), as public plugins verify; the spec says SHA-256',
    );
  });
});
