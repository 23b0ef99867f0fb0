import { describe, expect, it } from 'vitest';
import { decodeBase64Url, decodeBase64UrlText, encodeBase64Url } from './base64url.js';

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
    expect(decodeBase64Url(encoded)?.toString()).toBe(plain);
    expect(decodeBase64Url(encoded.replace(/=+$/, ''))?.toString()).toBe(plain);
  });
});

describe('decodeBase64Url', () => {
  const bytes = Buffer.from([0xfb, 0xff, 0xbf, 0x3e]);

  it('uses the url-safe alphabet when encoding', () => expect(encodeBase64Url(bytes)).toBe('-_-_Pg=='));

  it.each(['-_-_Pg==', '+/+/Pg==', '-_-_Pg', '+/+/Pg', ' / /Pg=='])('tolerates %j', (text) => {
    expect(decodeBase64Url(text)).toEqual(bytes);
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
