import { describe, expect, it } from 'vitest';
import { decodeBase64Url, encodeBase64Url } from './base64url.js';

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
