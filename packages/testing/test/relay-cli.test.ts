import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRelay } from '@payhook/relay';
import { FileJournal } from '@payhook/relay/file';
import { createRelayServer } from '@payhook/relay/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen } from '../../../test/support/listen.ts';
import { closing, startApp } from '../../relay/test/app.ts';
import { ADMIN, deliver, delivery, SIGNING_SECRET } from '../../relay/test/kit.ts';
import { assertBuilt, CLI, runCli } from './run-cli.js';

// `payhook relay` as a developer runs it: the built CLI in a child process, against a relay and an app on
// loopback.

const root = mkdtempSync(join(tmpdir(), 'payhook-relay-cli-'));
beforeAll(assertBuilt);
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function setup() {
  const journal = await FileJournal.open({ directory: mkdtempSync(join(root, 'journal-')) });
  const relay = createRelay({ journal, adminToken: ADMIN, signingSecret: SIGNING_SECRET, logger: false });
  closing.push(() => relay.close());
  const base = await listen(createRelayServer(relay));
  const create = await runCli(['relay', 'channel', 'create', 'alice', '--relay', base], {
    env: { PAYHOOK_RELAY_ADMIN_TOKEN: ADMIN },
  });
  expect(create.code).toBe(0);
  const token = /PAYHOOK_RELAY_TOKEN=(\S+)/.exec(create.stdout)![1]!;
  const key = /PAYHOOK_RELAY_KEY=(\S+)/.exec(create.stdout)![1]!;
  expect(create.stdout).toContain(`server_url: ${base}/in/alice`);
  const app = await startApp(key);
  return { relay, base, token, app, cursor: join(root, `cursor-${Math.random()}.json`) };
}

/** Starts `payhook relay connect` in the background; `stop()` sends SIGTERM and resolves its exit and output. */
function connect(base: string, token: string, forwardTo: string, cursor: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    [CLI, 'relay', 'connect', `${base}/out/alice`, '--forward-to', forwardTo, '--cursor-file', cursor],
    { env: { PATH: process.env.PATH ?? '', PAYHOOK_RELAY_TOKEN: token }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  closing.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return {
    async stop() {
      child.kill('SIGTERM');
      return { code: await exited, stdout, stderr };
    },
  };
}

describe('payhook relay', () => {
  it('connect stopped, 200 more journaled, connect again: all 200 arrive in order, none lost, none twice', async () => {
    const { relay, base, token, app, cursor } = await setup();
    const first = connect(base, token, app.url, cursor);
    for (let n = 1; n <= 10; n++) await deliver(relay, 'alice', delivery(n));
    await app.waitFor(10);
    const one = await first.stop();
    expect(one.code).toBe(0);
    expect(one.stderr).toContain('stopped; the cursor is saved');
    expect(one.stdout.trim().split('\n')[0]).toMatch(/^#1 200 handled in \d+ ms$/);
    for (let n = 11; n <= 210; n++) expect((await deliver(relay, 'alice', delivery(n))).status).toBe(200);
    const second = connect(base, token, app.url, cursor);
    await app.waitFor(210);
    const two = await second.stop();
    expect(two.code).toBe(0);
    expect(app.received.map((r) => r.sequence)).toEqual(Array.from({ length: 210 }, (_, i) => i + 1));
    expect(app.handled.size).toBe(210);
    expect([...app.handled.values()].every((count) => count === 1)).toBe(true);
    const lines = two.stdout.trim().split('\n');
    expect(lines.map((line) => Number(/^#(\d+) 200 handled/.exec(line)?.[1]))).toEqual(
      Array.from({ length: 200 }, (_, i) => i + 11),
    );
  }, 60_000);

  it('status tells what the channel holds and how far this machine is behind; replay sends a range again', async () => {
    const { relay, base, token, app, cursor } = await setup();
    const run = connect(base, token, app.url, cursor);
    for (let n = 1; n <= 3; n++) await deliver(relay, 'alice', delivery(n));
    await app.waitFor(3);
    await run.stop();
    await deliver(relay, 'alice', delivery(4));
    const env = { PAYHOOK_RELAY_TOKEN: token };
    const status = await runCli(['relay', 'status', `${base}/out/alice`, '--cursor-file', cursor], { env });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('channel alice: last 4, 4 retained from 1');
    expect(status.stdout).toMatch(/this machine: at 3, 1 behind; last delivery \d+ s ago/);
    const replay = await runCli(
      ['relay', 'replay', `${base}/out/alice`, '--from', '2', '--to', '3', '--forward-to', app.url],
      { env },
    );
    expect(replay.code).toBe(0);
    expect(
      replay.stdout
        .trim()
        .split('\n')
        .map((line) => line.replace(/ in \d+ ms$/, '')),
    ).toEqual(['#2 200 duplicate', '#3 200 duplicate']);
  }, 30_000);

  it('connect exits 1 after --max-reconnects failed attempts in a row, naming the cause', async () => {
    const dead = await listen((await import('node:http')).createServer());
    await closing.pop()!();
    const result = await runCli(
      [
        'relay',
        'connect',
        `${dead}/out/alice`,
        '--forward-to',
        'http://127.0.0.1:9/',
        '--max-reconnects',
        '2',
      ],
      { env: { PAYHOOK_RELAY_TOKEN: 'phr_x', HOME: root } },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('disconnected (ECONNREFUSED)');
    expect(result.stderr).toContain('no connection to the relay after 2 attempts in a row (ECONNREFUSED)');
  }, 30_000);

  it('refuses a usage error with exit 2: no token, no --forward-to', async () => {
    const noToken = await runCli([
      'relay',
      'connect',
      'http://127.0.0.1:1/out/a',
      '--forward-to',
      'http://x/',
    ]);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('--token is required (or set PAYHOOK_RELAY_TOKEN)');
    const noTarget = await runCli(['relay', 'connect', 'http://127.0.0.1:1/out/a'], {
      env: { PAYHOOK_RELAY_TOKEN: 't' },
    });
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain('--forward-to is required');
  });
});
