import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { importWithBuiltins } from '../../test/builtins.js';
import { hmacSha256Hex } from './hmac.js';

const nodeHmac = (secret: string, text: string) => createHmac('sha256', secret).update(text).digest('hex');

/** The module as workerd without nodejs_compat loads it: no node: module, no global Buffer. */
async function withoutNode<T>(load: () => Promise<T>): Promise<T> {
  vi.stubGlobal('Buffer', undefined);
  return importWithBuiltins(undefined, load);
}
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('hmacSha256Hex', () => {
  it('answers synchronously with node:crypto', () => {
    expect(hmacSha256Hex('api-secret')('{"a":1}')).toBe(nodeHmac('api-secret', '{"a":1}'));
  });

  it('answers the same hex through Web Crypto where node:crypto is missing, lone surrogates included', async () => {
    const web = await withoutNode(() => import('./hmac.js'));
    const texts = fc.string({ unit: 'binary' });
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 1, unit: 'binary' }), texts, async (secret, text) => {
        const answer = web.hmacSha256Hex(secret)(text);
        expect(answer).toBeInstanceOf(Promise);
        expect(await answer).toBe(nodeHmac(secret, text));
      }),
      { numRuns: 60 },
    );
    // A key longer than SHA-256's block is hashed first, by both.
    const long = 'k'.repeat(100);
    const sign = web.hmacSha256Hex(long);
    expect([await sign(''), await sign('x')]).toEqual([nodeHmac(long, ''), nodeHmac(long, 'x')]);
  });
});
