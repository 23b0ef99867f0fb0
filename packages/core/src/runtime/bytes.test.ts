import { isUtf8 as nodeIsUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { importWithBuiltins } from '../../test/builtins.js';
import * as withNode from './bytes.js';

// Every test runs twice: on Node's Buffer, and as on a runtime without `node:buffer` (workerd without
// nodejs_compat), where the module encodes and decodes by itself.
const withoutNode = await importWithBuiltins(undefined, () => import('./bytes.js'));
const text = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString() : bytes);

describe.each([
  ['with node:buffer', withNode],
  ['without node:buffer', withoutNode],
] as const)('%s', (_, { decodeBase64Url, decodeBase64UrlText, encodeBase64Url }) => {
  // RFC 4648 §10 test vectors, in the url-safe alphabet with padding kept.
  describe.each([
    ['', ''],
    ['f', 'Zg=='],
    ['fo', 'Zm8='],
    ['foo', 'Zm9v'],
    ['foob', 'Zm9vYg=='],
    ['fooba', 'Zm9vYmE='],
    ['foobar', 'Zm9vYmFy'],
  ])('RFC 4648 vector %j', (plain, encoded) => {
    it('encodes with padding kept', () => expect(encodeBase64Url(plain)).toBe(encoded));
    it('encodes without padding when asked', () =>
      expect(encodeBase64Url(plain, { pad: false })).toBe(encoded.replace(/=+$/, '')));
    it('decodes padded and unpadded', () => {
      expect(text(decodeBase64Url(encoded))).toBe(plain);
      expect(text(decodeBase64Url(encoded.replace(/=+$/, '')))).toBe(plain);
    });
  });

  describe('decodeBase64Url', () => {
    const bytes = Uint8Array.of(0xfb, 0xff, 0xbf, 0x3e);

    it('uses the url-safe alphabet when encoding', () => expect(encodeBase64Url(bytes)).toBe('-_-_Pg=='));

    it.each(['-_-_Pg==', '+/+/Pg==', '-_-_Pg', '+/+/Pg', ' / /Pg=='])('tolerates %j', (text) => {
      expect(Uint8Array.from(decodeBase64Url(text) ?? [])).toEqual(bytes);
    });

    it.each(['Zm9v!', 'Zm9vY', 'Zm9=v', 'Zg===', 'Zg=', 'Z===', 'Zm9vYg=\n', '\u00e9Zm9v'])(
      'refuses %j',
      (text) => {
        expect(decodeBase64Url(text)).toBeUndefined();
      },
    );
  });

  describe('decodeBase64UrlText', () => {
    // Below and above the 16 KiB reused buffer, so both paths are pinned.
    const texts = ['{"a":"ünï"}', `{"a":"${'x'.repeat(16 * 1024)}"}`, `{"a":"${'ж'.repeat(20_000)}"}`];

    it.each(texts.map((text) => [text.length, text]))('decodes a %i-character text as UTF-8', (_, text) => {
      for (const encoded of [encodeBase64Url(text), encodeBase64Url(text, { pad: false })]) {
        expect(decodeBase64UrlText(encoded)).toBe(text);
      }
      expect(decodeBase64UrlText(Buffer.from(text).toString('base64').replace(/\+/g, ' '))).toBe(text);
    });

    it('refuses what decodeBase64Url refuses, at any size', () => {
      for (const text of texts) {
        const encoded = encodeBase64Url(text, { pad: false });
        const broken = `${encoded.slice(0, 8)}!${encoded.slice(9)}`;
        expect(decodeBase64Url(broken)).toBeUndefined();
        expect(decodeBase64UrlText(broken)).toBeUndefined();
      }
      for (const text of ['Zm9v!', 'Zm9vY', 'Zm9=v', 'Zg===', '\u00e9Zm9v']) {
        expect(decodeBase64UrlText(text)).toBeUndefined();
      }
    });

    it('returns text that a later call does not overwrite', () => {
      const first = decodeBase64UrlText(encodeBase64Url('{"n":1}'));
      decodeBase64UrlText(encodeBase64Url('{"n":2}'));
      expect(first).toBe('{"n":1}');
    });
  });
});

describe('without node:buffer', () => {
  it('works on plain Uint8Arrays, not Buffers', () => {
    expect(Buffer.isBuffer(withNode.decodeBase64Url('Zm9v'))).toBe(true);
    expect(Buffer.isBuffer(withoutNode.decodeBase64Url('Zm9v'))).toBe(false);
  });

  // Base64 digits of both alphabets, padding, a space, and characters no decoder takes.
  const noisy = fc
    .array(fc.constantFrom(...'AZaz09-_+/= é!\n'.split(''), 'Zm9v', '=='), { maxLength: 40 })
    .map((parts) => parts.join(''));

  it('decodes and refuses exactly as with node:buffer', () => {
    fc.assert(
      fc.property(noisy, (input) => {
        const expected = withNode.decodeBase64Url(input);
        const actual = withoutNode.decodeBase64Url(input);
        expect(actual && Uint8Array.from(actual)).toEqual(expected && Uint8Array.from(expected));
        expect(withoutNode.decodeBase64UrlText(input)).toBe(withNode.decodeBase64UrlText(input));
      }),
      { numRuns: 5_000 },
    );
  });

  it('encodes any bytes and any text as with node:buffer', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 100 }),
        fc.string({ unit: 'grapheme' }),
        fc.boolean(),
        (bytes, text, pad) => {
          expect(withoutNode.encodeBase64Url(bytes, { pad })).toBe(withNode.encodeBase64Url(bytes, { pad }));
          expect(withoutNode.encodeBase64Url(text, { pad })).toBe(withNode.encodeBase64Url(text, { pad }));
        },
      ),
    );
  });

  it('decodes any bytes back, UTF-8 read as Buffer reads it', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const encoded = withNode.encodeBase64Url(bytes);
        expect(withoutNode.decodeBase64Url(encoded)).toEqual(bytes);
        expect(withoutNode.decodeBase64UrlText(encoded)).toBe(Buffer.from(bytes).toString());
      }),
    );
  });
});

// Any text: astral characters, lone surrogates (UTF-8 turns them into U+FFFD) and a leading byte-order mark.
const anyText = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constant('\ufeffa\ud800'),
);
// Any bytes: valid UTF-8 and not (truncated sequences, overlongs, stray continuations).
const anyBytes = fc.oneof(
  fc.uint8Array({ maxLength: 40 }),
  fc.string({ unit: 'grapheme' }).map((text) => new TextEncoder().encode(text)),
);

describe('UTF-8 without node:buffer', () => {
  it('works on plain Uint8Arrays, not Buffers', () =>
    expect(Buffer.isBuffer(withoutNode.utf8Bytes('a'))).toBe(false));

  it('encodes and measures any text as Buffer does', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        expect(withoutNode.utf8Bytes(text)).toEqual(Uint8Array.from(Buffer.from(text)));
        expect(withoutNode.utf8Length(text)).toBe(Buffer.byteLength(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('decodes and checks any bytes as Buffer and isUtf8 do', () => {
    fc.assert(
      fc.property(anyBytes, (bytes) => {
        expect(withoutNode.utf8Text(bytes)).toBe(Buffer.from(bytes).toString());
        expect(withoutNode.isUtf8(bytes)).toBe(nodeIsUtf8(bytes));
      }),
      { numRuns: 2_000 },
    );
  });

  it('copies a chunk and joins chunks', () => {
    const chunk = Uint8Array.of(1, 2);
    const copy = withoutNode.chunkBytes(chunk);
    chunk[0] = 9;
    expect(copy).toEqual(Uint8Array.of(1, 2));
    expect(withoutNode.chunkBytes('é')).toEqual(Uint8Array.of(0xc3, 0xa9));
    expect(withoutNode.concatBytes([copy, Uint8Array.of(3), new Uint8Array(0)], 3)).toEqual(
      Uint8Array.of(1, 2, 3),
    );
  });
});
