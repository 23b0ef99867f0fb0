import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../core/test/servers.ts';
import { createRelayChannel } from '../src/client/admin.js';
import { closing } from './app.js';
import { ADMIN, delivery, FORM, SIGNING_SECRET } from './kit.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'payhook-relay.js');
const env = {
  PATH: process.env.PATH ?? '',
  PAYHOOK_RELAY_SIGNING_SECRET: SIGNING_SECRET,
  PAYHOOK_RELAY_ADMIN_TOKEN: ADMIN,
};

describe('payhook-relay (the built bin)', () => {
  it('logs no secret, token, key or body, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [BIN, '--port', String(port), '--host', '127.0.0.1', '--journal', 'memory'],
      {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    closing.push(async () => void child.kill('SIGKILL'));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk));
    while (!output.includes('listening on')) await new Promise((resolve) => setTimeout(resolve, 20));
    const base = `http://127.0.0.1:${port}`;
    const created = await createRelayChannel({ relay: base, adminToken: ADMIN, name: 'alice' });
    const body = delivery(1);
    const posted = await fetch(created.serverUrl, {
      method: 'POST',
      headers: { 'content-type': FORM },
      body,
    });
    expect(posted.status).toBe(200);
    const read = await fetch(`${created.connectUrl}/events?after=0`, {
      headers: { authorization: `Bearer ${created.token}` },
    });
    expect(((await read.json()) as { events: unknown[] }).events).toHaveLength(1);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('payhook-relay listening on http://127.0.0.1:');
    expect(output).toContain('channel alice created');
    for (const secret of [SIGNING_SECRET, ADMIN, created.token, created.key, body.slice(5, 60)]) {
      expect(output).not.toContain(secret);
    }
    const key = spawnSync(process.execPath, [BIN, 'key', 'alice'], { env, encoding: 'utf8' });
    expect(key.stdout.trim()).toBe(created.key);
  });

  it('exits 2 with the reason when the signing secret is missing', () => {
    const result = spawnSync(process.execPath, [BIN], { env: { PATH: env.PATH }, encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('set PAYHOOK_RELAY_SIGNING_SECRET to 32 characters or more');
  });
});
