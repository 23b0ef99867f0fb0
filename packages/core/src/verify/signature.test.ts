import { execFileSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { importWithBuiltins } from '../../test/builtins.js';
import { encodeBase64Url } from '../runtime/bytes.js';
import { matchSecret, normalizeSignature, sign, verifySignature } from './signature.js';

// An independent base64url: by hand from the alphabet, not through Buffer's 'base64'.
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
function handBase64Url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]!;
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63]! : '=';
    out += i + 2 < bytes.length ? ALPHABET[n & 63]! : '=';
  }
  return out;
}

function openssl(input: string, algorithm: string): string | undefined {
  try {
    return execFileSync('openssl', ['dgst', `-${algorithm}`, '-binary'], { input })
      .toString('base64')
      .replace(/\+/g, '-')
      .replace(/\//g, '_');
  } catch {
    return undefined;
  }
}

const data = encodeBase64Url(JSON.stringify({ payment_id: 'p-1', status: 'success', amount: 10.5 }));

describe('sign', () => {
  it('is base64url(sha256(secret + data + secret)) with padding kept: 44 characters', () => {
    const expected = handBase64Url(crypto.createHash('sha256').update(`s3cret${data}s3cret`).digest());
    expect(sign(data, 's3cret')).toBe(expected);
    expect(expected).toHaveLength(44);
    expect(expected.endsWith('=')).toBe(true);
  });

  it('agrees with openssl', (context) => {
    const fromOpenssl = openssl(`s3cret${data}s3cret`, 'sha256');
    if (fromOpenssl === undefined) return context.skip('openssl is not installed');
    expect(sign(data, 's3cret')).toBe(fromOpenssl);
  });

  it('matches the service docs SHA-1 example when sha1 is chosen', () => {
    expect(encodeBase64Url('{"name":"Joe","age":20}')).toBe('eyJuYW1lIjoiSm9lIiwiYWdlIjoyMH0=');
    expect(sign('eyJuYW1lIjoiSm9lIiwiYWdlIjoyMH0=', 'changeme', { algorithm: 'sha1' })).toBe(
      'Bcj3hb-h00HrEMIoJ5nPW5ZHlVQ=',
    );
  });

  it('hashes a non-ASCII secret as UTF-8', () => {
    const expected = handBase64Url(
      crypto
        .createHash('sha256')
        .update(Buffer.from(`ключ${data}ключ`, 'utf8'))
        .digest(),
    );
    expect(sign(data, 'ключ')).toBe(expected);
  });
});

describe('verifySignature', () => {
  const signature = sign(data, 'current');

  it('accepts the exact signature and says which secret matched', () => {
    expect(verifySignature(data, signature, 'current')).toEqual({ valid: true, index: 0, id: undefined });
  });

  it('accepts the signature in standard base64, without padding, or with + turned into a space', () => {
    const standard = signature.replace(/-/g, '+').replace(/_/g, '/');
    for (const variant of [standard, signature.replace(/=+$/, ''), standard.replace(/\+/g, ' ')]) {
      expect(verifySignature(data, variant, 'current').valid).toBe(true);
    }
  });

  it('hashes data byte for byte: re-encoded data (unpadded) does not verify', () => {
    const unpadded = data.replace(/=+$/, '');
    expect(unpadded).not.toBe(data);
    expect(verifySignature(unpadded, signature, 'current')).toEqual({ valid: false, reason: 'mismatch' });
  });

  it('refuses a signature over data that was changed after signing', () => {
    const tampered = encodeBase64Url(JSON.stringify({ payment_id: 'p-1', status: 'success', amount: 99 }));
    expect(verifySignature(tampered, signature, 'current')).toEqual({ valid: false, reason: 'mismatch' });
  });

  it('reports a wrong-size or non-base64 signature as malformed', () => {
    for (const bad of ['', 'abc', `${signature}A`, signature.slice(0, 40), '!'.repeat(44)]) {
      expect(verifySignature(data, bad, 'current')).toEqual({ valid: false, reason: 'malformed' });
    }
  });

  it('never falls back to sha1: a SHA-1 signature fails under the default', () => {
    const sha1 = sign(data, 'current', { algorithm: 'sha1' });
    expect(sha1).toHaveLength(28);
    expect(verifySignature(data, sha1, 'current')).toEqual({ valid: false, reason: 'malformed' });
    expect(verifySignature(data, sha1, 'current', { algorithm: 'sha1' }).valid).toBe(true);
  });

  it('rotates: tries each secret and names the one that matched', () => {
    const old = sign(data, 'old');
    expect(verifySignature(data, old, ['new', 'old'])).toEqual({ valid: true, index: 1, id: undefined });
    expect(
      verifySignature(data, old, [
        { id: '2026-q4', secret: 'new' },
        { id: '2026-q3', secret: 'old' },
      ]),
    ).toEqual({ valid: true, index: 1, id: '2026-q3' });
    expect(verifySignature(data, old, ['new']).valid).toBe(false);
  });

  it('resolves secrets by the pos_id in the data', async () => {
    const test = encodeBase64Url(JSON.stringify({ pos_id: 'pos-test' }));
    const live = encodeBase64Url(JSON.stringify({ pos_id: 'pos-live' }));
    const resolver = (posId: string | undefined) =>
      posId === 'pos-test' ? 'test-secret' : posId === 'pos-live' ? ['live-new', 'live-old'] : undefined;
    await expect(verifySignature(test, sign(test, 'test-secret'), resolver)).resolves.toMatchObject({
      valid: true,
    });
    await expect(verifySignature(live, sign(live, 'live-old'), resolver)).resolves.toMatchObject({
      index: 1,
    });
    await expect(verifySignature(live, sign(live, 'test-secret'), resolver)).resolves.toMatchObject({
      valid: false,
      reason: 'mismatch',
    });
    const unknown = encodeBase64Url(JSON.stringify({ pos_id: 'pos-x' }));
    await expect(verifySignature(unknown, sign(unknown, 'x'), resolver)).resolves.toEqual({
      valid: false,
      reason: 'no_secret',
    });
  });

  it('verifies any data under any secret it was signed with, and no other (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.string({ minLength: 1 }),
        fc.string(),
        (secret, other, text) => {
          const encoded = encodeBase64Url(text);
          const good = sign(encoded, secret);
          expect(verifySignature(encoded, good, secret).valid).toBe(true);
          if (other !== secret) expect(verifySignature(encoded, good, other).valid).toBe(false);
        },
      ),
    );
  });
});

describe('matchSecret', () => {
  it('compares in constant time: as many character reads whether the first, the last or no character differs', () => {
    const expected = normalizeSignature(sign(data, 'current'))!;
    const flip = (text: string, at: number) =>
      text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    const reads = (candidate: string) => {
      const original = String.prototype.charCodeAt;
      let count = 0;
      String.prototype.charCodeAt = function (this: string, index: number) {
        count++;
        return original.call(this, index);
      };
      try {
        return [matchSecret(data, candidate, ['current']), count];
      } finally {
        String.prototype.charCodeAt = original;
      }
    };
    expect(expected).toHaveLength(43);
    expect([expected, flip(expected, 0), flip(expected, 42), 'A'.repeat(43)].map(reads)).toEqual([
      [0, 86],
      [-1, 86],
      [-1, 86],
      [-1, 86],
    ]);
  });
});

describe('normalizeSignature', () => {
  const signature = sign(data, 'current');
  const canonical = signature.slice(0, 43);

  it('checks the length and the alphabet before any hashing', () => {
    expect(normalizeSignature('A'.repeat(43))).toBe('A'.repeat(43));
    expect(normalizeSignature('A'.repeat(42))).toBeUndefined();
    expect(normalizeSignature(`${'A'.repeat(43)}A`)).toBeUndefined();
    expect(normalizeSignature(`${'A'.repeat(42)}*`)).toBeUndefined();
    expect(normalizeSignature(`${'A'.repeat(42)}é`)).toBeUndefined();
    expect(normalizeSignature('A'.repeat(27), 'sha1')).toBe('A'.repeat(27));
  });

  it('gives every accepted spelling of a digest the same canonical text', () => {
    const standard = signature.replace(/-/g, '+').replace(/_/g, '/');
    for (const variant of [signature, canonical, standard, standard.replace(/\+/g, ' ')]) {
      expect(normalizeSignature(variant)).toBe(canonical);
    }
  });

  it('clears the spare low bits of the last digit, as a decoder ignores them', () => {
    // 'A' is 0 and 'D' is 3: the last of 43 digits carries 4 bits, so 'D' decodes to the same bytes as 'A'.
    const digits = `${'A'.repeat(42)}D`;
    expect(Buffer.from(digits, 'base64')).toEqual(Buffer.from('A'.repeat(43), 'base64'));
    expect(normalizeSignature(digits)).toBe('A'.repeat(43));
  });

  it('agrees with Buffer decoding on any 32 bytes in any spelling (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.boolean(),
        fc.boolean(),
        (bytes, url, pad) => {
          let text = Buffer.from(bytes).toString(url ? 'base64url' : 'base64');
          if (pad && text.length === 43) text += '=';
          if (!pad) text = text.replace(/=+$/, '');
          expect(normalizeSignature(text)).toBe(Buffer.from(bytes).toString('base64url'));
        },
      ),
    );
  });
});

describe('on Node before 20.12 (no crypto.hash)', () => {
  it('signs and verifies the same with createHash', async () => {
    const calls: string[] = [];
    const createHash: typeof crypto.createHash = (algorithm, options) => {
      calls.push(algorithm);
      return crypto.createHash(algorithm, options);
    };
    const old = await importWithBuiltins(
      (id) =>
        id === 'node:crypto' ? { ...crypto, hash: undefined, createHash } : process.getBuiltinModule(id),
      () => import('./signature.js'),
    );
    expect(old.sign(data, 's3cret')).toBe(sign(data, 's3cret'));
    expect(old.verifySignature(data, sign(data, 's3cret'), 's3cret').valid).toBe(true);
    expect(old.verifySignature(data, sign(data, 'other'), 's3cret').valid).toBe(false);
    expect(calls).toEqual(['sha256', 'sha256', 'sha256']);
  });
});
