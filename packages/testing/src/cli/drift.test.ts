import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createWebhookHandler } from '@payhook/core';
import { createCapture } from '@payhook/core/capture';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedForm } from '../../../../test/support/signed-form.ts';
import { fakePurchase } from '../fixtures/primary.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const secret = 'drift-capture-secret';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), `payhook-drift-cmd-${process.pid}-`));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A capture file as production writes it: `notifications` delivered to a handler with `createCapture`. */
async function captureOf(notifications: Record<string, unknown>[]): Promise<string> {
  const lines: string[] = [];
  const capture = createCapture({ write: (line) => void lines.push(line) });
  const webhook = createWebhookHandler({ secret, capture, logger: false, handle: () => {} });
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  for (const notification of notifications) {
    await webhook({ method: 'POST', headers, body: signedForm(notification, secret) }, undefined);
  }
  await webhook({ method: 'POST', headers, body: signedForm(notifications[0], 'forged') }, undefined);
  await capture.flush();
  const file = join(dir, `capture-${lines.length}-${Math.random()}.jsonl`);
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

async function drift(args: string[], input = '') {
  const { io, out, err } = memoryIO(input);
  const code = await runCli(['drift', ...args], io);
  return { code, out, err };
}

const purchase = (seed: string, fields: Record<string, unknown> = {}) =>
  ({ ...fakePurchase({}, { seed }), ...fields }) as Record<string, unknown>;

describe('payhook drift', () => {
  it('counts a new field and a new status of a capture, naming them and never a value', async () => {
    const file = await captureOf([
      purchase('drift-1', { refund_reason: 'customer asked twice' }),
      purchase('drift-2', { refund_reason: 'wrong size', status: 'rejected' }),
      purchase('drift-3'),
    ]);
    expect(await drift([file])).toEqual({
      code: 1,
      out: [
        '2 of 3 captured notifications carried what payhook does not type',
        '  new field "refund_reason": 2',
        '  new status "rejected": 1',
      ],
      err: [],
    });
  });

  it('shows a name with bidi or C1 characters escaped, never raw', async () => {
    const file = await captureOf([
      purchase('drift-bidi', { 'refund\u202e_reason': 'x', status: 'ok\u0085' }),
    ]);
    const { out } = await drift([file]);
    expect(out.join('\n')).not.toMatch(/[\u0080-\u009f\u202a-\u202e]/);
    expect(out).toContain('  new field "refund\\u{202e}_reason": 1');
  });

  it('says nothing drifted and exits 0 when every notification is typed, reading standard input with -', async () => {
    const file = await captureOf([purchase('drift-4')]);
    const { readFile } = await import('node:fs/promises');
    expect(await drift(['-'], await readFile(file, 'utf8'))).toEqual({
      code: 0,
      out: ['0 of 1 captured notifications carried what payhook does not type'],
      err: [],
    });
  });

  it('counts a field turned nullable and an amount sent as text', async () => {
    const file = await captureOf([
      purchase('drift-5', { status_description: null, amount: '10.50' }),
      purchase('drift-6', { status_description: null }),
    ]);
    expect((await drift([file])).out).toEqual([
      '2 of 2 captured notifications carried what payhook does not type',
      '  "status_description" sent as null (typed string): 2',
      '  "amount" sent as string, coerced to number: 1',
    ]);
  });

  it('prints one JSON object with --json, the findings most frequent first, with the same exit code', async () => {
    const file = await captureOf([
      purchase('drift-7', { refund_reason: 'x', amount: '10.50' }),
      purchase('drift-8', { refund_reason: 'y' }),
    ]);
    const result = await drift(['--json', file]);
    expect(result.code).toBe(1);
    expect(result.out).toHaveLength(1);
    expect(JSON.parse(result.out[0]!)).toEqual({
      notifications: 2,
      drifted: 2,
      findings: [
        { kind: 'field', name: 'refund_reason', notifications: 2 },
        { kind: 'coerced', name: 'amount', sent: 'string', expected: 'number', notifications: 1 },
      ],
    });
    const clean = await drift(['--json', await captureOf([purchase('drift-9')])]);
    expect([clean.code, JSON.parse(clean.out[0]!)]).toEqual([
      0,
      { notifications: 1, drifted: 0, findings: [] },
    ]);
  });

  it('refuses a line that is not a capture, with exit 2', async () => {
    const file = join(dir, 'not-a-capture.jsonl');
    await writeFile(file, '{"hello":1}\n');
    const result = await drift([file]);
    expect(result.code).toBe(2);
    expect(result.err[0]).toBe(
      `payhook drift: ${file}, line 1: not a captured delivery (expected {"v":1,…} to {"v":3,…} from createCapture).`,
    );
  });
});
