import { describe, expect, it } from 'vitest';
import { PayloadError } from '../errors.js';
import { encodeBase64Url } from '../runtime/bytes.js';
import { decodeData } from './parse.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof PayloadError ? error.code : 'not a PayloadError';
  }
  return undefined;
}

describe('decodeData', () => {
  const json = JSON.stringify({ payment_id: 'p-1', note: 'plain ünïcode ≥ 2' });

  it('decodes base64url padded, unpadded, and standard base64', () => {
    const standard = Buffer.from(json).toString('base64');
    for (const data of [encodeBase64Url(json), encodeBase64Url(json, { pad: false }), standard]) {
      expect(decodeData(data)).toEqual(JSON.parse(json));
    }
  });

  it.each([
    ['not base64', 'not base64!', 'data.encoding_invalid'],
    ['empty', '', 'data.encoding_invalid'],
    ['not JSON', encodeBase64Url('{"a":'), 'data.json_invalid'],
    ['a JSON array', encodeBase64Url('[1,2]'), 'data.not_object'],
    ['a JSON string', encodeBase64Url('"x"'), 'data.not_object'],
    ['JSON null', encodeBase64Url('null'), 'data.not_object'],
  ])('refuses %s with %s', (_, data, code) => {
    expect(codeOf(() => decodeData(data))).toBe(code);
  });

  it('keeps __proto__ and constructor keys as inert own data', () => {
    const raw = decodeData(
      encodeBase64Url('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}'),
    );
    expect(Object.getPrototypeOf(raw)).toBe(Object.prototype);
    expect(Object.hasOwn(raw, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((raw as { polluted?: unknown }).polluted).toBeUndefined();
    expect(typeof raw.constructor).toBe('object');
  });
});
