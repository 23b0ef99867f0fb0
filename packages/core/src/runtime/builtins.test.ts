import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { importWithBuiltins, staticNodeImports } from '../../test/builtins.js';
import { FORM_HEADERS, formBody, post, purchase, SECRET } from '../../test/fixtures.js';
import { boundKey } from '../protocol/key.js';
import { sign } from '../verify/signature.js';

// Core as workerd without nodejs_compat (and Node.js before 20.16) loads it: no `node:` module at all, and no
// global Buffer while it loads and runs (but for Fetch: Node's own Request and Response need it), so a stray use
// of one fails here.
async function withoutNode<T>(load: () => Promise<T>): Promise<T> {
  vi.stubGlobal('Buffer', undefined);
  return importWithBuiltins(undefined, load);
}
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('@payhook/core without node: builtins', () => {
  it('handles a signed delivery, answers its redelivery as a duplicate and refuses a tampered copy', async () => {
    const core = await withoutNode(() => import('../index.js'));
    const handled: string[] = [];
    const webhook = core
      .createWebhookHandler({ secret: SECRET, logger: false })
      .on('purchase.success', (payment) => {
        handled.push(payment.order_id);
      });
    const body = formBody(purchase());
    const bytes = new TextEncoder().encode(body);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 100));
        controller.enqueue(bytes.subarray(100));
        controller.close();
      },
    });
    // As text, as bytes, and as a stream the handler reads.
    const answers = [
      await webhook(post(body), undefined),
      await webhook(post(bytes), undefined),
      await webhook({ ...post(undefined), stream }, undefined),
    ];
    expect(answers.map(({ status, body }) => `${status} ${body}`)).toEqual([
      '200 {"ok":true,"outcome":"handled"}',
      '200 {"ok":true,"outcome":"duplicate"}',
      '200 {"ok":true,"outcome":"duplicate"}',
    ]);
    const signature = /signature=[^&]+/.exec(body)![0];
    const tampered = formBody(purchase({ amount: 1 })).replace(/signature=[^&]+/, signature);
    const refused = await webhook(post(tampered), undefined);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'signature.invalid' } });
    expect(handled).toEqual(['order-1001']);
  });

  it('answers Fetch requests', async () => {
    const core = await importWithBuiltins(undefined, () => import('../index.js'));
    const webhook = core.createWebhookHandler({ secret: SECRET, logger: false }).onAny(() => {});
    const request = () =>
      new Request('http://payhook.test/webhooks', {
        method: 'POST',
        headers: FORM_HEADERS,
        body: formBody(purchase()),
      });
    const answers = [await webhook.fetch(request()), await webhook.fetch(request())];
    expect(await Promise.all(answers.map((answer) => answer.text()))).toEqual([
      '{"ok":true,"outcome":"handled"}',
      '{"ok":true,"outcome":"duplicate"}',
    ]);
  });

  it('signs and verifies as node:crypto does, with SHA-256 and SHA-1', async () => {
    const core = await withoutNode(() => import('../index.js'));
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ minLength: 1 }), (data, secret) => {
        for (const algorithm of ['sha256', 'sha1'] as const) {
          const signature = sign(data, secret, { algorithm });
          expect(core.sign(data, secret, { algorithm })).toBe(signature);
          expect(core.verifySignature(data, signature, secret, { algorithm })).toEqual({
            valid: true,
            index: 0,
            id: undefined,
          });
        }
      }),
      { numRuns: 300 },
    );
  });

  it('verifies data whose + form decoding turned into a space', async () => {
    const core = await withoutNode(() => import('../index.js'));
    const data = '+/+/Pg==';
    expect(core.verifySignature(data.replaceAll('+', ' '), sign(data, SECRET), SECRET).valid).toBe(true);
  });

  it('bounds long and unstorable keys to the same store keys', async () => {
    const dedupe = await withoutNode(() => import('../protocol/key.js'));
    for (const key of [`${'x'.repeat(3_000)}a`, 'pay\0ment', 'pay\ud800ment', `${'ж'.repeat(150)}😀`]) {
      expect(dedupe.boundKey(key)).toBe(boundKey(key));
    }
  });
});

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..');

describe.each(['index.ts'])('%s', (entry) => {
  it('imports no node: module, but for types', () => {
    expect(staticNodeImports(SRC, entry)).toEqual([]);
  });
});

it('finds a node: import where one is left (the Redis store)', () => {
  expect(staticNodeImports(SRC, 'stores/redis.ts')).toEqual([
    'stores/redis.ts: node:crypto',
    'stores/redis-script.ts: node:crypto',
  ]);
});
