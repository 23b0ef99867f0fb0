import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formBody, purchase, SECRET } from '../../test/fixtures.js';
import { RequestError } from '../errors.js';
import { createWebhookHandler } from '../handler.js';
import { mediaTypeOf, parseRawBody, readEnvelope } from './body.js';
import {
  envelopeFromObject,
  hasAtMostJsonValues,
  MAX_ENVELOPE_FIELDS,
  repeatedJsonField,
} from './envelope.js';
import { parseForm } from './form.js';

const MiB = 1024 * 1024;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };
const SIGNATURE = `${'A'.repeat(43)}%3D`;
const TOO_MANY = {
  code: 'payload.too_large',
  message:
    '[@payhook/core] the body has more than 1000 fields or JSON values: a delivery has two fields, data and signature.',
};

/** `prefix`, then `unit` repeated, then `A`s to exactly `size` bytes. */
function fill(prefix: string, unit: string, size = MiB): Buffer {
  const rest = size - prefix.length;
  return Buffer.from(prefix + unit.repeat(Math.floor(rest / unit.length)) + 'A'.repeat(rest % unit.length));
}

async function answer(body: unknown, headers: Record<string, string> = FORM) {
  const handler = createWebhookHandler({ secret: SECRET, logger: false, store: false });
  const result = await handler({ method: 'POST', headers, body }, undefined);
  return { status: result.status, error: JSON.parse(result.body).error };
}

describe('hostile bodies at the 1 MiB limit, refused before the signature is checked', () => {
  it.each([
    ['a run of &', fill('', '&'), 413, TOO_MANY],
    ['many empty-valued fields', fill('', 'a=&'), 413, TOO_MANY],
    ['a run of =', fill('', '='), 400, { code: 'payload.field_missing' }],
    ['a run of % in data', fill(`signature=${SIGNATURE}&data=`, '%'), 400, { code: 'payload.malformed' }],
    ['a run of + in data', fill(`signature=${SIGNATURE}&data=`, '+'), 401, { code: 'signature.invalid' }],
    ['escapes in data', fill(`signature=${SIGNATURE}&data=`, '%41'), 401, { code: 'signature.invalid' }],
    ['a long signature', fill('data=eyJhIjoxfQ&signature=', 'A'), 401, { code: 'signature.invalid' }],
    ['a repeated data field', fill('', 'data=x&'), 400, { code: 'payload.field_repeated' }],
  ])('answers %s with its status and code', async (_, body, status, error) => {
    expect(body.length).toBe(MiB);
    const result = await answer(body);
    expect(result.status).toBe(status);
    expect(result.error).toMatchObject(error);
  });

  it.each([
    ['deep JSON', fill('', '[')],
    ['wide JSON (one key repeated)', fill('{', '"a":1,')],
    ['a JSON array of numbers', fill('{"signature":"x","data":[', '0,')],
  ])('answers %s with 413 payload.too_large', async (_, body) => {
    const result = await answer(body, JSON_TYPE);
    expect(result.status).toBe(413);
    expect(result.error).toEqual(TOO_MANY);
  });

  it('counts a text body kept by a framework in UTF-8 bytes, not characters, against maxBodyBytes', async () => {
    // 400,000 characters, 1.2 MB: the limit is in bytes whatever form the body was kept in.
    const body = `data=${'€'.repeat(400_000)}&signature=${SIGNATURE}`;
    const result = await answer(body);
    expect(result.status).toBe(413);
    expect(result.error).toMatchObject({ code: 'payload.too_large' });
  });

  it.each([
    ['escaped quotes', '\\"'],
    ['backslashes', '\\\\'],
    ['quoted names', '\\"data\\":'],
  ])('answers JSON whose strings hold a megabyte of %s as any JSON envelope', async (_, unit) => {
    const body = `${fill('{"data":"x","signature":"y","note":"', unit, MiB - 2)}"}`;
    expect(await answer(body, JSON_TYPE)).toMatchObject({
      status: 401,
      error: { code: 'signature.invalid' },
    });
  });

  it('answers JSON holding one long string, and long numbers, as any JSON envelope', async () => {
    const text = await answer(`${fill('{"signature":"x","data":"', 'A', MiB - 2)}"}`, JSON_TYPE);
    expect(text).toMatchObject({ status: 401, error: { code: 'signature.invalid' } });
    const number = await answer(`${fill('{"signature":"x","data":1', '1', MiB - 1)}}`, JSON_TYPE);
    expect(number).toMatchObject({ status: 400, error: { code: 'payload.malformed' } });
  });
});

describe('parseForm', () => {
  it(`reads a delivery with ${MAX_ENVELOPE_FIELDS - 2} other fields, and refuses one more field`, () => {
    const others = Array.from({ length: MAX_ENVELOPE_FIELDS - 2 }, (_, i) => `f${i}=${i}`).join('&');
    expect(parseForm(`data=eyJhIjoxfQ%3D%3D&${others}&signature=abc`)).toEqual({
      data: 'eyJhIjoxfQ==',
      signature: 'abc',
    });
    expect(() => parseForm(`data=x&${others}&signature=abc&more`)).toThrow(TOO_MANY.message);
  });

  it('counts empty fields, as body-parser does', () => {
    expect(() => parseForm('&'.repeat(MAX_ENVELOPE_FIELDS))).toThrow(TOO_MANY.message);
    expect(() => parseForm('&'.repeat(MAX_ENVELOPE_FIELDS - 1))).toThrow(
      '[@payhook/core] the delivery has no data field: expected data and signature.',
    );
  });

  it.each([
    ['escaped', '%64%61%74%61=x&signature=z', { data: 'x', signature: 'z' }],
    ['partly escaped, in either case', 'd%61ta=x&%73ignatur%65=z', { data: 'x', signature: 'z' }],
    ['spelled with + for a space', 'data=x&signature=z&my+field=1', { data: 'x', signature: 'z' }],
  ])('decodes field names %s, as URLSearchParams does', (_, body, envelope) => {
    expect(parseForm(body)).toEqual(envelope);
    const standard = new URLSearchParams(body);
    expect({ data: standard.get('data'), signature: standard.get('signature') }).toEqual(envelope);
  });

  it.each([
    ['data=x&signature=z&%64ata=y', 'data'],
    ['signature=z&data=x&%73%69%67%6E%61%74%75%72%65=y', 'signature'],
    ['data&signature=z&data=y', 'data'],
  ])('counts a repeat after decoding names: %s is refused as a repeated %s', (body, name) => {
    expect(() => parseForm(body)).toThrow(`[@payhook/core] the field ${name} appears more than once.`);
  });

  it('reads a name without = as a field with an empty value, and keeps a name it cannot decode as it is', () => {
    expect(parseForm('data&signature=z')).toEqual({ data: '', signature: 'z' });
    expect(parseForm('d%ata=x&data=y&signature=z')).toEqual({ data: 'y', signature: 'z' });
  });

  it.each([['data[a]=1'], ['data[]=1'], ['%64ata%5Ba%5D=1'], ['signature[0]=1']])(
    'answers 400 payload.malformed to %s, a field a nesting form parser turns into an object or list',
    (field) => {
      const name = field.includes('signature') ? 'signature' : 'data';
      expect(() => parseForm(`data=x&signature=z&${field}`)).toThrow(
        `[@payhook/core] the field ${name} is not a string.`,
      );
    },
  );

  it('decodes names in linear time: a megabyte of escaped names is refused at the field limit', () => {
    expect(() => parseForm(fill('', '%64%61%74%61%5B=&', MiB).toString())).toThrow(TOO_MANY.message);
    expect(() => parseForm(`signature=z&${'%64'.repeat(MiB / 3)}=`)).toThrow(
      '[@payhook/core] the delivery has no data field: expected data and signature.',
    );
  });

  it.each([
    ['+ as space', 'a+b', 'a b'],
    ['escapes', '%41%2b%2B%20', 'A++ '],
    ['UTF-8 escapes', '%D1%97%F0%9F%92%B3', 'ї💳'],
    ['raw UTF-8 kept', 'ї+%41', 'ї A'],
    ['padding only', 'eyJhIjoxfQ%3d%3D', 'eyJhIjoxfQ=='],
  ])('decodes %s as decodeURIComponent does', (_, value, decoded) => {
    expect(parseForm(`signature=s&data=${value}`).data).toBe(decoded);
    expect(decodeURIComponent(value.replace(/\+/g, ' '))).toBe(decoded);
  });

  it.each([['%'], ['%4'], ['%G1'], ['%FF'], ['%E0%A4%A'], ['%ED%A0%80']])(
    'answers 400 payload.malformed to the escape %s, as decodeURIComponent refuses it',
    (value) => {
      expect(() => parseForm(`signature=s&data=${value}`)).toThrow(
        '[@payhook/core] the form body has a malformed percent-escape.',
      );
      expect(() => decodeURIComponent(value)).toThrow(URIError);
    },
  );
});

describe('parseRawBody (JSON)', () => {
  it(`reads an envelope with ${MAX_ENVELOPE_FIELDS} commas and brackets, refuses one more`, () => {
    // One {, two commas between the members, one [, and zeros - 1 commas in the list: zeros + 3.
    const envelope = (zeros: number) => `{"data":"x","signature":"y","list":[${Array(zeros).fill(0)}]}`;
    expect(parseRawBody(envelope(MAX_ENVELOPE_FIELDS - 3), 'json')).toEqual({ data: 'x', signature: 'y' });
    expect(() => parseRawBody(envelope(MAX_ENVELOPE_FIELDS - 2), 'json')).toThrow(TOO_MANY.message);
  });

  it('counts commas and brackets inside strings too (a delivery has none: its fields are base64)', () => {
    expect(hasAtMostJsonValues('"a,b,[{"', 3)).toBe(false);
    expect(hasAtMostJsonValues('"a,b,[{"', 4)).toBe(true);
    expect(hasAtMostJsonValues('', 0)).toBe(true);
  });
});

describe('parseRawBody (JSON), a field of the wrong type', () => {
  it.each([
    ['data', '{"data":["a","b"]}'],
    ['data', '{"data":["a","b"],"signature":"s"}'],
    ['signature', '{"data":"a","signature":["s","t"]}'],
    ['data', '{"data":["a"],"signature":"s"}'],
    ['data', '{"data":7,"signature":"s"}'],
  ])('refuses a %s that is not a string with 400 payload.malformed, never as a repeat: %s', (name, text) => {
    expect(() => parseRawBody(text, 'json')).toThrow(
      new RequestError('payload.malformed', `the field ${name} is not a string.`),
    );
  });

  it('answers a JSON list as a malformed envelope whether payhook or a JSON body parser read it', async () => {
    const malformed = {
      status: 400,
      error: { code: 'payload.malformed', message: '[@payhook/core] the field data is not a string.' },
    };
    expect(await answer('{"data":["a","b"]}', JSON_TYPE)).toEqual(malformed);
    const parsed = { data: ['a', 'b'], signature: 's' };
    expect(await answer(parsed, JSON_TYPE)).toEqual(malformed);
    // A form parser's list of two is still a repeated field.
    expect((await answer(parsed, FORM)).error.code).toBe('payload.field_repeated');
  });
});

describe('parseRawBody (JSON), a repeated field', () => {
  it.each([
    ['data', '{"data":"a","data":"b","signature":"s"}'],
    ['signature', '{"signature":"s","data":"a","signature":"t"}'],
    ['data', '{"data":"a","signature":"s","d\\u0061ta":"b"}'],
    ['data', '{ "data" : "a" , "signature" : "s" , "data" : {"x":1} }'],
  ])('refuses a repeated %s with 400 payload.field_repeated, as the form: %s', (name, text) => {
    expect(() => parseRawBody(text, 'json')).toThrow(
      new RequestError('payload.field_repeated', `the field ${name} appears more than once.`),
    );
  });

  it.each([
    [
      'the names in nested objects and strings',
      '{"data":"a","meta":{"data":1,"s":"\\"data\\""},"signature":"s"}',
    ],
    ['an escaped quote before a key', '{"note":"\\"","data":"a","signature":"s","x":["data","signature"]}'],
    ['a key that only starts like data', '{"data":"a","signature":"s","dat\\u0061x":"b"}'],
  ])('reads an envelope that holds %s once as keys', (_, text) => {
    expect(parseRawBody(text, 'json')).toEqual({ data: 'a', signature: 's' });
  });

  it('finds no repeat where JSON.parse kept every key', () => {
    expect(repeatedJsonField('{"data":"a","signature":"s"}')).toBeUndefined();
    expect(repeatedJsonField('{"data":"a","signature":"s","data2":"\\\\"}')).toBeUndefined();
  });
});

describe('envelopeFromObject, on what a body parser built', () => {
  it.each([
    ['an object (qs, body-parser extended)', { data: { a: '1' }, signature: 's' }, 'payload.malformed'],
    [
      'a bracketed key (body-parser extended: false)',
      { 'data[a]': '1', signature: 's' },
      'payload.malformed',
    ],
    ['a one-element list (qs, data[]=1)', { data: ['1'], signature: 's' }, 'payload.malformed'],
    ['a list of two (qs, data=a&data=b)', { data: ['a', 'b'], signature: 's' }, 'payload.field_repeated'],
    [
      'a list with an object (qs, data=a&data[b]=1)',
      { data: ['a', { b: '1' }], signature: 's' },
      'payload.malformed',
    ],
    ['no data at all', { datum: 'a', signature: 's' }, 'payload.field_missing'],
  ])('answers %s with %s', (_, body, code) => {
    expect(() => envelopeFromObject(body)).toThrow(expect.objectContaining({ code }));
  });
});

describe('mediaTypeOf', () => {
  it('reads a long Content-Type parameter list', () => {
    expect(mediaTypeOf(`application/x-www-form-urlencoded${'; a=b'.repeat(10_000)}`)).toBe('form');
  });
});

describe('a delivery at the size limit', () => {
  it('is handled when signed, whatever its size up to maxBodyBytes', async () => {
    const notification = purchase({ description: 'x'.repeat(700_000) });
    const body = formBody(notification);
    expect(body.length).toBeLessThan(MiB);
    const handler = createWebhookHandler({ secret: SECRET, logger: false, handle: () => undefined });
    const result = await handler({ method: 'POST', headers: FORM, body: Buffer.from(body) }, undefined);
    expect(result).toMatchObject({ status: 200, outcome: 'handled' });
  });
});

describe('the stream, read under maxBodyBytes', () => {
  const limits = { maxBodyBytes: 1_000, readTimeoutMs: 1_000 };

  it('refuses 413 payload.too_large as soon as the bytes read pass the limit, and pauses the stream', async () => {
    const chunks = Array.from({ length: 4 }, () => Buffer.from('a'.repeat(400)));
    const stream = Readable.from(chunks, { objectMode: false });
    const read = readEnvelope({ headers: FORM, stream }, 'form', limits);
    await expect(read).rejects.toMatchObject({ code: 'payload.too_large', status: 413 });
    expect([stream.destroyed, stream.isPaused()]).toEqual([false, true]);
  });

  it('reads a body of exactly the limit', async () => {
    const body = formBody(purchase());
    const stream = Readable.from([Buffer.from(body)]);
    const envelope = await readEnvelope({ headers: FORM, stream }, 'form', {
      ...limits,
      maxBodyBytes: body.length,
    });
    expect(envelope).toEqual(parseForm(body));
  });

  it('refuses a web stream past the limit too', async () => {
    const stream = new Blob(['a'.repeat(600), 'b'.repeat(600)]).stream();
    await expect(readEnvelope({ headers: FORM, stream }, 'form', limits)).rejects.toMatchObject({
      code: 'payload.too_large',
    });
  });
});
