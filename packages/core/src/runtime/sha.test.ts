import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha1, sha256 } from './sha.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const ascii = (text: string) => new TextEncoder().encode(text);

// FIPS 180-4 examples (NIST CSRC "Examples with intermediate values") and the million-`a` message of FIPS 180-2.
describe.each([
  [
    'abc',
    ascii('abc'),
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    'a9993e364706816aba3e25717850c26c9cd0d89d',
  ],
  [
    'the empty message',
    ascii(''),
    'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    'da39a3ee5e6b4b0d3255bfef95601890afd80709',
  ],
  [
    'the two-block message',
    ascii('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'),
    '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    '84983e441c3bd26ebaae4aa1f95129e5e54670f1',
  ],
  [
    'a million a',
    new Uint8Array(1_000_000).fill(0x61),
    'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0',
    '34aa973cd4c4daa4f61eeb2bdbad27316534016f',
  ],
])('%s', (_, message, expected256, expected1) => {
  it('has the SHA-256 digest of the standard', () => expect(hex(sha256(message))).toBe(expected256));
  it('has the SHA-1 digest of the standard', () => expect(hex(sha1(message))).toBe(expected1));
});

describe('against node:crypto', () => {
  // Up to three blocks: every padding case (a length byte that fits the last block or needs one more).
  it('has the digests of any message', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (message) => {
        expect(hex(sha256(message))).toBe(createHash('sha256').update(message).digest('hex'));
        expect(hex(sha1(message))).toBe(createHash('sha1').update(message).digest('hex'));
      }),
      { numRuns: 2_000 },
    );
  });

  it('has the digests of every length around a block boundary', () => {
    for (let length = 50; length <= 130; length++) {
      const message = Uint8Array.from({ length }, (_, i) => (i * 7 + length) & 0xff);
      expect(hex(sha256(message)), String(length)).toBe(createHash('sha256').update(message).digest('hex'));
      expect(hex(sha1(message)), String(length)).toBe(createHash('sha1').update(message).digest('hex'));
    }
  });
});
