import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeListener, createWebhookHandler, SIGNATURE_HINTS } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHandler, fakePurchase, signWebhook } from '../src/index.js';
import { assertBuilt, CLI, runCli, runShell } from './run-cli.js';

const secret = 'cli-secret';
const env = { PAYHOOK_SECRET: secret };
const purchase = fakePurchase({}, { seed: 'cli' });
const file = join(tmpdir(), `payhook-cli-${process.pid}.json`);

beforeAll(() => {
  assertBuilt();
  writeFileSync(file, JSON.stringify(purchase));
});
afterAll(() => rmSync(file, { force: true }));

describe('payhook sign | payhook verify', () => {
  it('round-trips: the signed body verifies and the token is masked', async () => {
    const signed = await runCli(['sign', '--file', file, '--format', 'body'], { env });
    expect(signed).toMatchObject({ code: 0, stderr: '' });
    expect(signed.stdout).toBe(signWebhook(purchase, secret).body);
    const verified = await runCli(['verify', '--secret', 'old-secret', '--secret', secret], {
      input: signed.stdout,
    });
    expect(verified.code).toBe(0);
    const lines = verified.stdout.split('\n');
    expect(lines[0]).toBe('signature: valid (sha256, secret #1 of 2)');
    expect(lines[1]).toBe('notification: purchase success 1000 (primary)');
    const printed = JSON.parse(lines.slice(2).join('\n'));
    expect(printed.payment_id).toBe(purchase.payment_id);
    expect(printed.cc_token).toBe(
      `${purchase.cc_token!.slice(0, 4)}…${purchase.cc_token!.slice(-4)} (64 chars)`,
    );
    expect(verified.stdout).not.toContain(purchase.cc_token);
  });

  it('round-trips through a real shell pipe', async () => {
    const node = JSON.stringify(process.execPath);
    const cli = JSON.stringify(CLI);
    const result = await runShell(
      `${node} ${cli} sign --file ${JSON.stringify(file)} --format body | ${node} ${cli} verify`,
      env,
    );
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 2)).toEqual([
      'signature: valid (sha256, secret #0)',
      'notification: purchase success 1000 (primary)',
    ]);
  });

  it('prints body, data and signature by default, reading the notification from stdin', async () => {
    const signed = await runCli(['sign', '-'], { env, input: JSON.stringify(purchase) });
    const expected = signWebhook(purchase, secret);
    expect(signed.code).toBe(0);
    expect(signed.stdout).toBe(
      `body       ${expected.body}\ndata       ${expected.data}\nsignature  ${expected.signature}\nheader     content-type: application/x-www-form-urlencoded\n`,
    );
  });

  it('verifies a JSON envelope and a sha1 delivery with --algorithm sha1', async () => {
    const json = signWebhook(purchase, secret, { variant: 'json' });
    expect((await runCli(['verify'], { env, input: json.body })).code).toBe(0);
    const sha1 = signWebhook(purchase, secret, { variant: 'sha1' }).body;
    const plain = await runCli(['verify'], { env, input: sha1 });
    expect(plain.code).toBe(1);
    expect(plain.stdout.split('\n').slice(0, 2)).toEqual([
      'signature: INVALID (sha256: signature.invalid)',
      `hint: sha1: ${SIGNATURE_HINTS.sha1}`,
    ]);
    const opted = await runCli(['verify', '--algorithm', 'sha1'], { env, input: sha1 });
    expect(opted.code).toBe(0);
    expect(opted.stdout.split('\n')[0]).toBe('signature: valid (sha1, secret #0)');
  });

  it('says INVALID, exits 1, and still never prints the token for a tampered delivery', async () => {
    const tampered = signWebhook(purchase, secret, { variant: 'tampered' });
    const result = await runCli(['verify'], { env, input: tampered.body });
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n').slice(0, 2)).toEqual([
      'signature: INVALID (sha256: signature.invalid)',
      'notification: purchase success 1000 (primary, UNVERIFIED)',
    ]);
    expect(result.stdout).not.toContain(purchase.cc_token);
  });
});

describe('payhook verify gives the verdict of the handler', () => {
  const answerOf = async (body: string) => {
    const handler = createWebhookHandler({ secret, logger: false, store: false, handle: () => undefined });
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    return handler({ method: 'POST', headers, body: Buffer.from(body) }, undefined);
  };

  it('refuses a body whose last field ends in a newline, as the handler does, and says why', async () => {
    const body = `${signWebhook(purchase, secret).body}\n`;
    const answer = await answerOf(body);
    expect([answer.status, answer.error?.code]).toEqual([401, 'signature.invalid']);
    const verified = await runCli(['verify', '--explain'], { env, input: body });
    expect(verified.code).toBe(1);
    expect(verified.stdout.split('\n').slice(0, 4)).toEqual([
      'signature: INVALID (sha256: signature.invalid)',
      `hint: signature_whitespace: ${SIGNATURE_HINTS.signature_whitespace}`,
      `answer: 401 ${answer.body}`,
      'notification: purchase success 1000 (primary, UNVERIFIED)',
    ]);
  });

  it('signs a body without a trailing newline into a file, which the handler takes and verify accepts', async () => {
    const out = join(tmpdir(), `payhook-cli-body-${process.pid}.txt`);
    try {
      const node = JSON.stringify(process.execPath);
      const signing = `${node} ${JSON.stringify(CLI)} sign --file ${JSON.stringify(file)} --format body > ${JSON.stringify(out)}`;
      expect((await runShell(signing, env)).code).toBe(0);
      const body = readFileSync(out, 'utf8');
      expect(body).toBe(signWebhook(purchase, secret).body);
      expect((await answerOf(body)).status).toBe(200);
      expect((await runCli(['verify', '--file', out], { env })).code).toBe(0);
    } finally {
      rmSync(out, { force: true });
    }
  });

  it('says with --explain when nothing explains a refusal', async () => {
    const forged = signWebhook(purchase, 'not-the-secret').body;
    const result = await runCli(['verify', '--explain'], { env, input: forged });
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')[1]).toBe(
      'hint: none: nothing payhook can guess explains it (a forgery, a tampered delivery, or a secret not given here).',
    );
  });
});

describe('payhook send against a live server', () => {
  const app = createTestHandler();
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const webhook = createWebhookHandler<IncomingMessage>({ secret, logger: false, handle: app.handle });
    server = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    url = `http://127.0.0.1:${address.port}/webhook`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('--repeat 3: one handled, two duplicates', async () => {
    app.reset();
    const result = await runCli(['send', 'purchase.success', '--url', url, '--repeat', '3', '--seed', 's1'], {
      env,
    });
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe(
      `POST ${url} purchase.success purchase ${fakePurchase({}, { seed: 's1' }).payment_id} (exact)`,
    );
    expect(lines.slice(1)).toEqual([
      '#1 200 {"ok":true,"outcome":"handled"}',
      '#2 200 {"ok":true,"outcome":"duplicate"}',
      '#3 200 {"ok":true,"outcome":"duplicate"}',
      'sent 3: 1 handled, 2 duplicate',
    ]);
    expect(app.calls).toHaveLength(1);
    app.expectHandledOnce(fakePurchase({}, { seed: 's1' }));
  });

  it('--count 2 with --set: two distinct notifications carrying the set fields', async () => {
    app.reset();
    const result = await runCli(
      [
        'send',
        'refund.success',
        '--url',
        url,
        '--count',
        '2',
        '--set',
        'amount=99.5',
        '--set',
        'fee.amount=3',
      ],
      { env },
    );
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').at(-1)).toBe('sent 2: 2 handled');
    expect(app.calls).toHaveLength(2);
    const [first, second] = app.calls.map((c) => c.notification);
    expect(first?.kind === 'secondary' && second?.kind === 'secondary').toBe(true);
    expect(first).toMatchObject({ method: 'refund', amount: 99.5, fee: { amount: 3, currency: 'UAH' } });
    expect(first && second && first.payment_id !== second.payment_id).toBe(true);
  });

  it('--variant tampered: refused with 401 signature.invalid, exit 1', async () => {
    app.reset();
    const result = await runCli(['send', 'purchase.pending-3ds', '--url', url, '--variant', 'tampered'], {
      env,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('#1 401 {"ok":false,"error":{"code":"signature.invalid"');
    expect(result.stdout.trim().split('\n').at(-1)).toBe('sent 1: 1 401 signature.invalid');
    expect(app.calls).toHaveLength(0);
  });

  it('reports a delivery that got no answer and exits 1', async () => {
    const hangUp = createServer();
    hangUp.on('connection', (socket) => socket.destroy());
    await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve));
    const { port } = hangUp.address() as { port: number };
    try {
      const result = await runCli(['send', 'void.success', '--url', `http://127.0.0.1:${port}/`], { env });
      expect(result.code).toBe(1);
      // Node says `socket hang up` or `read ECONNRESET`, depending on when the reset arrives.
      expect(result.stderr).toMatch(/^#1 no answer: (socket hang up|read ECONNRESET) \(ECONNRESET\)\n$/);
      expect(result.stdout.trim().split('\n').at(-1)).toBe('sent 1: 1 no answer');
    } finally {
      await new Promise((resolve) => hangUp.close(resolve));
    }
  });
});

describe('bad arguments exit 2 with a message', () => {
  it.each([
    [[], 'Usage: payhook <command>'],
    [['nope'], 'payhook: unknown command "nope".'],
    [['send', '--url', 'http://127.0.0.1:1/'], 'payhook send: name an event, e.g. purchase.success.'],
    [['send', 'purchase.bogus', '--url', 'http://x/'], 'payhook send: unknown event "purchase.bogus"'],
    [['send', 'purchase.success'], 'payhook send: --url is required.'],
    [
      ['send', 'purchase.success', '--url', 'ftp://x/'],
      'payhook send: --url must be http or https, not ftp:.',
    ],
    [
      ['send', 'purchase.success', '--url', 'http://x/', '--repeat', '0'],
      '--repeat must be an integer from 1 to 10000',
    ],
    [['send', 'purchase.success', '--url', 'http://x/', '--set', 'novalue'], '--set expects key=value'],
    [['send', 'purchase.success', '--url', 'http://x/', '--set', '__proto__.x=1'], 'is not a usable path'],
    [['send', 'purchase.success', '--url', 'http://x/', '--variant', 'odd'], '--variant must be one of'],
    [['sign', '--bogus'], 'payhook sign: unknown option --bogus.'],
    [['sign', '--file', '/nonexistent/n.json'], 'payhook sign: cannot read /nonexistent/n.json (ENOENT).'],
    [['verify', '--algorithm', 'md5'], 'payhook verify: --algorithm must be sha256 or sha1, not "md5".'],
  ])('payhook %j', async (args, message) => {
    const result = await runCli(args as string[], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('a missing secret names PAYHOOK_SECRET', async () => {
    const result = await runCli(['sign', '--file', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "payhook sign: no secret: pass --secret S or set PAYHOOK_SECRET.\nRun 'payhook sign --help' for usage.\n",
    );
  });

  it('input that is not a delivery is a usage error', async () => {
    const result = await runCli(['verify'], { env, input: 'hello' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the input has no data and signature fields');
  });
});

describe('--help', () => {
  it.each(['sign', 'send', 'verify'])('payhook %s --help prints its usage and exits 0', async (command) => {
    const result = await runCli([command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout.startsWith(`Usage: payhook ${command}`)).toBe(true);
  });

  it('payhook --help lists the commands', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/sign[\s\S]*send[\s\S]*verify[\s\S]*serve/);
  });
});
