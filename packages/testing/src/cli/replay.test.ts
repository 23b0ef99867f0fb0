import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakePurchase } from '../fixtures/primary.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const secret = 'replay-in-process-secret';
const purchase = fakePurchase({}, { seed: 'replay-in-process' });
const line = (extra: object) =>
  JSON.stringify({ v: 1, at: '2026-11-20T10:00:00.000Z', status: 200, outcome: 'handled', ...extra });

let server: Server;
let url: string;
let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), `payhook-replay-cmd-${process.pid}-`));
  file = join(dir, 'capture.jsonl');
  await writeFile(
    file,
    `${line({ notification: purchase })}\n\n${line({ status: 401, outcome: 'refused', code: 'signature.invalid' })}\n`,
  );
  const webhook = createWebhookHandler<IncomingMessage>({ secret, logger: false, handle: () => {} });
  server = createServer(createNodeListener(webhook));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function replay(args: string[], env: Record<string, string> = {}, input = '') {
  const { io, out, err } = memoryIO(input, env);
  const code = await runCli(['replay', ...args], io);
  return { code, out, err };
}

describe('payhook replay (in-process)', () => {
  it('prints per line what production answered then and the endpoint now, and a tally', async () => {
    const result = await replay([file, '--url', url, '--resign', secret]);
    expect(result).toEqual({
      code: 0,
      out: [
        `line 1: purchase success order ${purchase.order_id} (captured 200 handled) → 200 {"ok":true,"outcome":"handled"}`,
        'replayed 1: 1 answered 2xx, 0 not',
      ],
      err: [],
    });
  });

  it("prints the captured answer's Retry-After (format 3), when production told the service to come back", async () => {
    const captured = JSON.stringify({
      v: 3,
      at: '2026-11-20T10:00:00.000Z',
      status: 503,
      outcome: 'refused',
      code: 'store.unavailable',
      answerHeaders: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' },
      notification: purchase,
    });
    const result = await replay(['-', '--url', url, '--resign', secret], {}, `${captured}\n`);
    // The endpoint's outcome (handled, or duplicate after the tests before) is not this test's concern.
    expect(result.out[0]).toMatch(
      `line 1: purchase success order ${purchase.order_id} (captured 503 store.unavailable, Retry-After 1) → 200 {`,
    );
  });

  it('reads the capture from standard input with -, and the secret from PAYHOOK_SECRET', async () => {
    const result = await replay(
      ['-', '--url', url],
      { PAYHOOK_SECRET: secret },
      `${line({ notification: purchase })}\n`,
    );
    expect(result.code).toBe(0);
    expect(result.out[0]).toContain('→ 200 {"ok":true,"outcome":"duplicate"}');
  });

  it('exits 1 when the endpoint refuses a delivery or does not answer', async () => {
    const refused = await replay([file, '--url', url, '--resign', 'another-secret']);
    expect(refused.code).toBe(1);
    expect(refused.out[1]).toBe('replayed 1: 0 answered 2xx, 1 not');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const down = await replay([file, '--url', `http://127.0.0.1:${port}/webhooks`, '--resign', secret]);
    expect(down.code).toBe(1);
    expect(down.err[0]).toMatch(/^line 1: purchase success order .* → no answer: /);
    expect(down.out).toEqual(['replayed 1: 0 answered 2xx, 1 not']);
  });

  it('exits 2 with the reason and the help hint for a bad invocation', async () => {
    const cases: Array<[string[], Record<string, string>, string]> = [
      [
        [file, '--url', url],
        {},
        'payhook replay: no secret to sign with: pass --resign SECRET or set PAYHOOK_SECRET.',
      ],
      [['--url', url, '--resign', secret], {}, 'payhook replay: name the capture file.'],
      [[file, file, '--url', url, '--resign', secret], {}, 'payhook replay: name one capture file.'],
      [[file, '--resign', secret], {}, 'payhook replay: --url is required.'],
      [
        [join(dir, 'missing.jsonl'), '--url', url, '--resign', secret],
        {},
        `payhook replay: cannot read ${join(dir, 'missing.jsonl')} (ENOENT).`,
      ],
    ];
    for (const [args, env, message] of cases) {
      const result = await replay(args, env);
      expect([result.code, result.err]).toEqual([2, [message, "Run 'payhook replay --help' for usage."]]);
    }
  });

  it('names the line and the field of the wrong type, never its content, and posts nothing', async () => {
    const customer = 'jo.customer@example.com';
    const cases: Array<[object, string]> = [
      [{ v: 1, notification: { order_id: customer } }, '"status" is not an HTTP status'],
      [{ v: 1, status: 200, notification: { order_id: customer } }, '"outcome" is not a string'],
      [
        { v: 1, status: 200, outcome: 'handled', notification: [customer] },
        '"notification" is not an object',
      ],
      [{ v: 1, status: 200, outcome: 'handled', notification: customer }, '"notification" is not an object'],
      [{ v: 1, status: 200, outcome: 'handled', code: 7, notification: {} }, '"code" is not a string'],
      [
        { v: 1, status: 200, outcome: 'handled', contentType: 5, notification: { order_id: customer } },
        '"contentType" is not a string',
      ],
    ];
    for (const [captured, reason] of cases) {
      const input = `${line({ notification: purchase })}\n${JSON.stringify(captured)}\n`;
      const bad = await replay(['-', '--url', url, '--resign', secret], {}, input);
      expect([bad.code, bad.out, bad.err]).toEqual([
        2,
        [],
        [
          `payhook replay: standard input, line 2: ${reason} (not a captured delivery from createCapture).`,
          "Run 'payhook replay --help' for usage.",
        ],
      ]);
      expect(bad.err.join('\n')).not.toContain('undefined');
      expect(bad.err.join('\n')).not.toContain(customer);
    }
  });

  it('shows a notification field it cannot name as ?, never as undefined, and still posts the line', async () => {
    const odd = line({ notification: { order_id: { nested: true }, status: 'success' } });
    const result = await replay(['-', '--url', url, '--resign', secret], {}, `${odd}\n`);
    expect(result.code).toBe(1);
    expect(result.out[0]).toMatch(/^line 1: \? success order \? \(captured 200 handled\) → 400 /);
    expect(result.out[1]).toBe('replayed 1: 0 answered 2xx, 1 not');
  });

  it('names the line that is not a captured delivery, and prints its help', async () => {
    const bad = await replay(['-', '--url', url, '--resign', secret], {}, 'not json\n');
    expect(bad.err[0]).toBe(
      'payhook replay: standard input, line 1: not JSON (a capture has one object per line); --skip-torn replays the other lines.',
    );
    const help = await replay(['--help']);
    expect(help.code).toBe(0);
    expect(help.out[0]).toMatch(/^Usage: payhook replay FILE --url URL \[--resign SECRET\]/);
  });

  it('names a torn line by its number, never its content, and with --skip-torn replays the other lines', async () => {
    const customer = 'jo.customer@example.com';
    const other = fakePurchase({}, { seed: 'replay-torn' });
    // Half a line (a full disk), the next line appended to it, then a whole line.
    const torn = `${line({ notification: { ...other, customer_email: customer } }).slice(0, 60)}${line({ notification: other })}`;
    const input = `${line({ notification: other })}\n${torn}\n${line({ notification: purchase })}\n`;
    const refused = await replay(['-', '--url', url, '--resign', secret], {}, input);
    expect([refused.code, refused.out, refused.err]).toEqual([
      2,
      [],
      [
        'payhook replay: standard input, line 2: not JSON (a capture has one object per line); --skip-torn replays the other lines.',
        "Run 'payhook replay --help' for usage.",
      ],
    ]);
    const skipped = await replay(['-', '--url', url, '--resign', secret, '--skip-torn'], {}, input);
    expect(skipped.code).toBe(0);
    expect(skipped.err).toEqual(['line 2: torn (not JSON), skipped']);
    expect(skipped.out.map((printed) => printed.split(' → ')[0])).toEqual([
      `line 1: purchase success order ${other.order_id} (captured 200 handled)`,
      `line 3: purchase success order ${purchase.order_id} (captured 200 handled)`,
      'replayed 2: 2 answered 2xx, 0 not',
    ]);
    expect([...refused.err, ...skipped.err, ...skipped.out].join('\n')).not.toContain(customer);
  });

  it('escapes control characters of a captured notification and code in what it prints', async () => {
    const odd = line({
      code: 'handler.failed\u001b[2J',
      notification: { ...purchase, order_id: 'order-9\n\u001b[31mPAID\u0007', payment_id: 'p-escape' },
    });
    const result = await replay(['-', '--url', url, '--resign', secret], {}, `${odd}\n`);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe(
      'line 1: purchase success order order-9\\n\\x1b[31mPAID\\x07 (captured 200 handler.failed\\x1b[2J) → 200 {"ok":true,"outcome":"handled"}',
    );
  });
});
