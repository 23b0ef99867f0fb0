import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeListener, createWebhookHandler, MemoryStore } from '@payhook/core';
import { createRelay, MemoryJournal } from '@payhook/relay';
import { connectRelay, fileCursor, memoryCursor } from '@payhook/relay/client';
import { createRelayServer } from '@payhook/relay/node';
import { afterAll, describe, expect, it } from 'vitest';
import { closing, listen } from '../../../../test/support/listen.ts';
import { TEST_CARDS } from '../fake/outcomes.js';
import { startFakeServer } from '../server.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';
import { serveCommand } from './serve.js';
import { throughRelay } from './serve-relay.js';

const ADMIN = 'admin-token-for-cli-tests-0123';
const root = mkdtempSync(join(tmpdir(), 'payhook-cli-relay-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function relay() {
  const instance = createRelay({
    journal: new MemoryJournal(),
    adminToken: ADMIN,
    signingSecret: 'signing-secret-for-cli-tests-0123456789',
    logger: false,
  });
  closing.push(() => instance.close());
  const base = await listen(createRelayServer(instance));
  const { io, out } = memoryIO('', { PAYHOOK_RELAY_ADMIN_TOKEN: ADMIN });
  expect(await runCli(['relay', 'channel', 'create', 'alice', '--relay', base], io)).toBe(0);
  const token = /PAYHOOK_RELAY_TOKEN=(\S+)/.exec(out.join('\n'))![1]!;
  return { instance, base, token, out };
}

async function post(base: string, body: string) {
  const answer = await fetch(`${base}/in/alice`, { method: 'POST', body });
  expect(answer.status).toBe(200);
}

describe('payhook relay (in process)', () => {
  it('channel create prints the server_url, the connect command, and the token and key once', async () => {
    const { base, out } = await relay();
    expect(out[0]).toBe('channel:    alice');
    expect(out[1]).toBe(`server_url: ${base}/in/alice   (the payments' server_url)`);
    expect(out[2]).toBe(
      `connect:    payhook relay connect ${base}/out/alice --forward-to http://localhost:3000/webhooks`,
    );
    expect(out[4]).toMatch(/^ {2}PAYHOOK_RELAY_TOKEN=phr_\S+ {3}\(reads the channel\)$/);
    expect(out[5]).toMatch(/^ {2}PAYHOOK_RELAY_KEY=\S+ {3}\(verifyRelayHeader in the app\)$/);
  });

  it("channel create names the relay's refusal: a taken name, a wrong admin token", async () => {
    const { base } = await relay();
    const taken = memoryIO('', { PAYHOOK_RELAY_ADMIN_TOKEN: ADMIN });
    expect(await runCli(['relay', 'channel', 'create', 'alice', '--relay', base], taken.io)).toBe(1);
    expect(taken.err.join('\n')).toContain('creating channel alice: the relay answered 409 channel.exists.');
    const wrong = memoryIO('', { PAYHOOK_RELAY_ADMIN_TOKEN: 'wrong-admin-token-0000' });
    expect(await runCli(['relay', 'channel', 'create', 'bob', '--relay', base], wrong.io)).toBe(1);
    expect(wrong.err.join('\n')).toContain('the relay answered 401 admin.token_invalid');
  });

  it('status without a cursor here, and replay to an endpoint that refuses exits 1', async () => {
    const { base, token } = await relay();
    await post(base, 'data=a&signature=b');
    const env = { PAYHOOK_RELAY_TOKEN: token };
    const status = memoryIO('', env);
    expect(await runCli(['relay', 'status', `${base}/out/alice`], status.io)).toBe(0);
    expect(status.out).toEqual([
      'channel alice: last 1, 1 retained from 1',
      expect.stringMatching(/^last received: \d{4}-\d\d-\d\dT/),
      'this machine: no cursor for this channel (payhook relay connect has not run here)',
    ]);
    const app = await listen(createServer((_req, res) => res.writeHead(400).end()));
    const replay = memoryIO('', env);
    expect(
      await runCli(['relay', 'replay', `${base}/out/alice`, '--from', '1', '--forward-to', app], replay.io),
    ).toBe(1);
    expect(replay.out).toEqual([expect.stringMatching(/^#1 400 in \d+ ms$/)]);
    expect(replay.err).toEqual(['payhook relay: 1 sent again, 1 not answered 2xx']);
  });

  it('status reports how far this machine is behind from the cursor file', async () => {
    const { base, token } = await relay();
    for (let n = 0; n < 3; n++) await post(base, `data=${n}&signature=s`);
    const cursorFile = join(root, 'cursor.json');
    await fileCursor(cursorFile).save({
      url: `${base}/out/alice`,
      sequence: 1,
      deliveredAt: Date.now() - 5_000,
    });
    const status = memoryIO('', { PAYHOOK_RELAY_TOKEN: token });
    expect(
      await runCli(['relay', 'status', `${base}/out/alice`, '--cursor-file', cursorFile], status.io),
    ).toBe(0);
    expect(status.out[2]).toMatch(/^this machine: at 1, 2 behind; last delivery [5-7] s ago$/);
  });

  it('connect reports each disconnection and exits 1 after --max-reconnects attempts', async () => {
    const dead = await listen(createServer());
    await closing.pop()!();
    const { io, err } = memoryIO('', { PAYHOOK_RELAY_TOKEN: 'phr_x' });
    const code = await runCli(
      [
        'relay',
        'connect',
        `${dead}/out/alice`,
        '--forward-to',
        'http://127.0.0.1:9/',
        '--max-reconnects',
        '2',
        '--long-poll',
      ],
      io,
    );
    expect(code).toBe(1);
    expect(err[0]).toMatch(
      /^payhook relay: forwarding .* \(cursor .*\.payhook\/relay\/127\.0\.0\.1_\d+\/alice\.json\)$/,
    );
    expect(err[1]).toMatch(
      /^payhook relay: disconnected \(ECONNREFUSED\); again in [\d.]+ s, attempt 1; no delivery yet$/,
    );
    expect(err.at(-1)).toMatch(/no connection to the relay after 2 attempts in a row \(ECONNREFUSED\)/);
  });

  it('refuses a bad invocation with exit 2 and says why', async () => {
    const cases: [string[], string][] = [
      [['relay'], 'the action is connect, replay, status or channel create, not "".'],
      [
        ['relay', 'channel', 'delete', 'x'],
        'the channel action is: payhook relay channel create NAME --relay URL.',
      ],
      [['relay', 'replay', 'http://r/out/a', '--forward-to', 'http://a/'], '--from is required.'],
      [
        ['relay', 'replay', 'http://r/out/a', '--from', '0', '--forward-to', 'http://a/'],
        '--from must be a sequence number (1 or more), not "0".',
      ],
      [
        ['relay', 'replay', 'http://r/out/a', '--from', '5', '--to', '2', '--forward-to', 'http://a/'],
        '--to must not be before --from.',
      ],
      [['relay', 'status', 'http://r/out/a', 'extra'], 'unexpected argument "extra".'],
    ];
    for (const [argv, message] of cases) {
      const { io, err } = memoryIO('', { PAYHOOK_RELAY_TOKEN: 't' });
      expect(await runCli(argv, io), argv.join(' ')).toBe(2);
      expect(err[0]).toBe(`payhook relay: ${message}`);
    }
  });

  it("serve --relay: the fake's webhooks go to the relay channel, and connect brings them to the app", async () => {
    const { base, token } = await relay();
    const handled: string[] = [];
    const webhook = createWebhookHandler<IncomingMessage>({
      secret: 'serve-relay-secret',
      store: new MemoryStore(),
      logger: false,
    });
    webhook.onAny((notification) => void handled.push(notification.order_id));
    const app = await listen(createServer(createNodeListener(webhook)));
    const fake = await startFakeServer({
      secret: 'serve-relay-secret',
      transport: throughRelay(`${base}/in/alice`),
    });
    closing.push(() => fake.close());
    const stop = new AbortController();
    const client = connectRelay({
      url: `${base}/out/alice`,
      token,
      forwardTo: app,
      cursor: memoryCursor(),
      signal: stop.signal,
    });
    fake.fake.createPayment({
      pos_id: fake.fake.project.posId,
      mode: 'direct',
      method: 'purchase',
      amount: 5,
      currency: 'UAH',
      description: 'Tea',
      order_id: 'via-relay',
      cc_number: TEST_CARDS.success,
      exp_month: 12,
      exp_year: 2030,
      card_cvv: '123',
      server_url: 'http://unreachable.invalid/webhooks',
    });
    await fake.fake.idle();
    while (handled.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    stop.abort();
    await client;
    expect(handled).toEqual(['via-relay']);
    // The fake records the payment's server_url; its answer (200) is the relay's.
    expect(fake.fake.deliveries.map((d) => [d.url, d.status, d.body])).toEqual([
      ['http://unreachable.invalid/webhooks', 200, '{"ok":true,"sequence":1}'],
    ]);
  });

  it('serve --relay prints where webhooks go, and refuses a URL that is not http(s)', async () => {
    const { io, out } = memoryIO('');
    const argv = ['--port', '0', '--secret', 's', '--relay', 'http://127.0.0.1:8443/in/alice'];
    expect(await serveCommand(argv, io, AbortSignal.abort())).toBe(0);
    expect(out.at(-1)).toBe(
      "webhooks: to the relay at http://127.0.0.1:8443/in/alice, not the payments' server_url",
    );
    const bad = memoryIO('');
    expect(
      await serveCommand(['--port', '0', '--secret', 's', '--relay', 'ftp://x'], bad.io, AbortSignal.abort()),
    ).toBe(2);
    expect(bad.err[0]).toBe('payhook serve: --relay must be http or https, not ftp:.');
  });
});
