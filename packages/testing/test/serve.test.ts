import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI } from './run-cli.js';

beforeAll(() => {
  assertBuilt();
});

describe('payhook serve (built CLI, child process)', () => {
  it('prints the credentials and the address, answers the API, and exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--endpoints-key', 'ek-given'], {
      env: { PATH: process.env.PATH ?? '', PAYHOOK_SECRET: 'child-secret' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(stdout);
        if (match) resolve(match[1]!);
      });
      child.on('close', () => reject(new Error(`serve exited early: ${stderr}`)));
    });
    const lines = Object.fromEntries(
      stdout
        .split('\n')
        .filter((l) => /^(pos_id|api_key|endpoints_key): /.test(l))
        .map((l) => l.split(': ') as [string, string]),
    );
    expect(lines.endpoints_key).toBe('ek-given');
    expect(lines.pos_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(lines.api_key).toMatch(/^ak_[0-9a-f]{24}$/);
    expect(stdout).not.toContain('child-secret');

    const refused = await fetch(`${url}/api/v1/payment`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': 'SVC-HMAC-SHA256 wrong:sig',
        'x-api-key': 'ek-given',
      },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    const invalid = await fetch(`${url}/api/v1/payment`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': `SVC ${lines.api_key}:child-secret`,
        'x-api-key': 'ek-given',
      },
      body: JSON.stringify({ pos_id: lines.pos_id }),
    });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { args: { code: string } }).args.code).toBe('V-400');

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    clearTimeout(killer);
  });
});
