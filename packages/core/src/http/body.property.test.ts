import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeData } from '../notification/parse.js';
import { plusForSpace } from '../runtime/bytes.js';
import { resolveSecrets } from '../verify/secrets.js';
import { matchSecret, normalizeSignature } from '../verify/signature.js';
import { mediaTypeOf, parseRawBody } from './body.js';
import { repeatedJsonField } from './envelope.js';
import { parseForm } from './form.js';

/**
 * Characters a call may visit, charged to every built-in the refusal path can call: a scan by how far it went, a
 * copy or conversion by its size. Code of ours that loops runs over a buffer one of these calls made, once, so
 * this count is the work up to a constant. Deterministic, unlike a clock; it cannot see a regular expression
 * backtrack, so the expressions on these paths are written without ambiguity (no two ways to match a run).
 */
function countWork(run: () => void): number {
  let work = 0;
  const restore: (() => void)[] = [];
  const charge = <T extends object>(owner: T, name: keyof T & string, cost: (...args: never[]) => number) => {
    const original = owner[name] as (...args: unknown[]) => unknown;
    restore.push(() => {
      owner[name] = original as T[typeof name];
    });
    owner[name] = function (this: unknown, ...args: unknown[]) {
      const result = original.apply(this, args);
      work +=
        1 + (cost as (self: unknown, result: unknown, ...args: unknown[]) => number)(this, result, ...args);
      return result;
    } as T[typeof name];
  };
  const length = (value: unknown) => (value as { length: number }).length;
  const scan = (self: string, found: number, needle: string, from = 0) =>
    found === -1 ? self.length - from : found - from + needle.length;
  const text = String.prototype as unknown as Record<string, unknown>;
  charge(text, 'indexOf', scan as never);
  charge(text, 'lastIndexOf', ((self: string) => self.length) as never);
  charge(text, 'includes', ((self: string, _: boolean, needle: string, from = 0) =>
    scan(self, self.indexOf(needle, from), needle, from)) as never);
  charge(text, 'startsWith', ((_: string, __: boolean, needle: string) => needle.length) as never);
  charge(text, 'endsWith', ((_: string, __: boolean, needle: string) => needle.length) as never);
  for (const name of ['slice', 'substring', 'trim', 'toLowerCase', 'toUpperCase']) {
    charge(text, name, ((_: string, result: string) => result.length) as never);
  }
  for (const name of ['split', 'replace', 'replaceAll', 'repeat', 'padEnd', 'padStart']) {
    charge(
      text,
      name,
      ((self: string, result: unknown) =>
        self.length + (typeof result === 'string' ? result.length : 0)) as never,
    );
  }
  charge(text, 'charCodeAt', (() => 0) as never);
  // A global expression resumes at lastIndex: charge what it read from there.
  const regex = RegExp.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of ['exec', 'test']) {
    const original = regex[name]!;
    restore.push(() => {
      regex[name] = original;
    });
    regex[name] = function (this: RegExp, input: unknown) {
      const from = this.global || this.sticky ? this.lastIndex : 0;
      const result = original.call(this, input);
      const to = (this.global || this.sticky) && this.lastIndex > 0 ? this.lastIndex : length(input);
      work += 1 + Math.max(0, to - from);
      return result;
    };
  }
  charge(JSON as unknown as Record<string, unknown>, 'parse', ((_: unknown, __: unknown, input: string) =>
    length(input)) as never);
  charge(globalThis as unknown as Record<string, unknown>, 'decodeURIComponent', ((
    _: unknown,
    __: unknown,
    input: string,
  ) => length(input)) as never);
  charge(
    Buffer as unknown as Record<string, unknown>,
    'from',
    ((_: unknown, result: Buffer) => result.length) as never,
  );
  charge(
    Buffer as unknown as Record<string, unknown>,
    'concat',
    ((_: unknown, result: Buffer) => result.length) as never,
  );
  charge(
    Buffer.prototype as unknown as Record<string, unknown>,
    'toString',
    ((self: Buffer) => self.length) as never,
  );
  charge(
    Buffer.prototype as unknown as Record<string, unknown>,
    'write',
    ((_: Buffer, written: number) => written) as never,
  );
  try {
    run();
  } finally {
    for (const undo of restore.reverse()) undo();
  }
  return work;
}

const EXPECTED = 'A'.repeat(43);

/**
 * Every step a body goes through before its signature is known to match (the handler's order): media type, the
 * envelope (form or JSON), the signature's form, the data's digest with the `+` retry, the resolver's look at
 * unverified data; and the decoding of data that follows.
 */
function refusalPath(body: Buffer, contentType: string): void {
  try {
    const envelope = parseRawBody(body, mediaTypeOf(contentType));
    normalizeSignature(envelope.signature);
    matchSecret(envelope.data, EXPECTED, ['secret-one', 'secret-two']);
    void resolveSecrets(() => undefined, envelope.data);
    decodeData(plusForSpace(envelope.data));
  } catch {
    // A refusal is an answer too: its work counts the same.
  }
}

const tokens = fc.constantFrom(
  '&',
  '=',
  '%',
  '+',
  ' ',
  '%3D',
  '%4',
  '%41',
  '%E0%A4',
  'data=',
  'signature=',
  'd',
  'a',
  'A',
  'ї',
  '[',
  ']',
  '{',
  '}',
  ',',
  ':',
  '"',
  '"a":',
  '\\u0041',
  '0',
  '1',
  '.',
  'e',
  '%64ata=',
  'data[a]=',
  '"data":',
  '\\',
  '\\"',
);
const shapes = fc.array(tokens, { minLength: 1, maxLength: 6 }).map((parts) => parts.join(''));
const prefixes = fc.constantFrom(
  '',
  'data=',
  'signature=',
  `signature=${EXPECTED}%3D&data=`,
  `data=eyJhIjoxfQ&signature=`,
  '{"data":"',
  `{"signature":"${EXPECTED}=","data":"`,
  '{"signature":"x","data":[',
  '{"data":"x","signature":"y","z":"',
  '{"data":"x","data":"y","signature":"',
  '[',
);
const types = fc.constantFrom('application/x-www-form-urlencoded', 'application/json');

/**
 * Characters visited per body byte, at most, whatever the shape: the worst found is about 20 (data of `+` only:
 * decoded, hashed, turned back and hashed again, by two secrets). A quadratic step costs the body's length per
 * byte, thousands at these sizes.
 */
const WORK_PER_BYTE = 24;
const FIXED_WORK = 1024;

describe('refusal work is linear in the body, whatever its shape', () => {
  it(`visits at most ${WORK_PER_BYTE} characters per body byte at 8, 16 and 32 KiB`, () => {
    fc.assert(
      fc.property(prefixes, shapes, types, (prefix, shape, type) => {
        for (const size of [8192, 16384, 32768]) {
          const body = Buffer.from(prefix + shape.repeat(Math.ceil(size / shape.length)));
          const work = countWork(() => refusalPath(body, type));
          expect(work).toBeLessThanOrEqual(WORK_PER_BYTE * body.length + FIXED_WORK);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads a long Content-Type header in linear work', () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        const header = shape.repeat(Math.ceil(16384 / shape.length));
        const work = countWork(() => {
          try {
            mediaTypeOf(header);
          } catch {
            // 415: counted the same.
          }
        });
        expect(work).toBeLessThanOrEqual(WORK_PER_BYTE * header.length + FIXED_WORK);
      }),
      { numRuns: 100 },
    );
  });

  it('counts the quadratic scan it exists to catch', () => {
    // The parser this replaced looked for `=` from each field's start to the body's end.
    const quadratic = (text: string) => {
      for (let start = 0; start <= text.length; ) {
        let end = text.indexOf('&', start);
        if (end === -1) end = text.length;
        text.indexOf('=', start);
        start = end + 1;
      }
    };
    const body = '&'.repeat(8192);
    expect(countWork(() => quadratic(body))).toBeGreaterThan(WORK_PER_BYTE * body.length * 100);
  });
});

describe('form decoding', () => {
  it('matches decodeURIComponent, + as space, on any value', () => {
    const percentEscape = fc
      .integer({ min: 0, max: 255 })
      .map((byte) => `%${byte.toString(16).padStart(2, '0')}`);
    const piece = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 3 }), percentEscape, fc.constant('+'));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const value = pieces.join('').replace(/[&]/g, '');
        let expected: string | undefined;
        try {
          expected = decodeURIComponent(value.replace(/\+/g, ' '));
        } catch {
          expected = undefined;
        }
        let decoded: string | undefined;
        try {
          decoded = parseForm(`signature=s&data=${value}`).data;
        } catch {
          decoded = undefined;
        }
        expect(decoded).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('turns spaces back into + exactly as a global replace does, on text that is valid UTF-16', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (text) => {
        expect(isUtf8(Buffer.from(text))).toBe(true);
        expect(plusForSpace(text)).toBe(text.replace(/ /g, '+'));
      }),
      { numRuns: 1000 },
    );
  });
});

/** `name` with each character percent-escaped or not, in either case of hex digit. */
function spellings(name: string): fc.Arbitrary<string> {
  return fc
    .array(fc.constantFrom('plain', 'upper', 'lower'), { minLength: name.length, maxLength: name.length })
    .map((ways) =>
      [...name]
        .map((char, i) => {
          const hex = char.charCodeAt(0).toString(16);
          return ways[i] === 'plain' ? char : `%${ways[i] === 'upper' ? hex.toUpperCase() : hex}`;
        })
        .join(''),
    );
}

describe('form field names', () => {
  it('are read as URLSearchParams reads them: decoded, a repeat refused, a missing field named', () => {
    const name = fc.oneof(
      spellings('data'),
      spellings('signature'),
      fc.constantFrom('x', 'da', 'datax', 'dat%61x', '%zz', 'a+b', 'data+', ''),
    );
    const value = fc.stringMatching(/^[A-Za-z0-9_-]{0,6}$/);
    fc.assert(
      fc.property(fc.array(fc.tuple(name, value), { maxLength: 6 }), (fields) => {
        const body = fields.map(([n, v]) => `${n}=${v}`).join('&');
        const standard = new URLSearchParams(body);
        const data = standard.getAll('data');
        const signature = standard.getAll('signature');
        let answer: unknown;
        try {
          answer = parseForm(body);
        } catch (error) {
          answer = (error as { code?: string }).code;
        }
        if (data.length > 1 || signature.length > 1) expect(answer).toBe('payload.field_repeated');
        else if (data.length === 0 || signature.length === 0) expect(answer).toBe('payload.field_missing');
        else expect(answer).toEqual({ data: data[0], signature: signature[0] });
      }),
      { numRuns: 2000 },
    );
  });
});

describe('repeated keys of a JSON envelope', () => {
  it('are found exactly when the top-level object has data or signature twice, however spelled', () => {
    const key = fc.constantFrom(
      '"data"',
      '"d\\u0061ta"',
      '"signature"',
      '"sign\\u0061ture"',
      '"x"',
      '"\\"data\\""',
    );
    const value = fc.constantFrom(
      '"v"',
      '{"data":1,"data":2}',
      '["data","signature"]',
      '"\\\\"',
      '"\\"data\\":"',
      '1',
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(key, value), { maxLength: 6 }), (members) => {
        const text = `{${members.map(([k, v]) => `${k}:${v}`).join(',')}}`;
        const keys = members.map(([k]) => JSON.parse(k) as string);
        const count = (name: string) => keys.filter((k) => k === name).length;
        const repeated = repeatedJsonField(text);
        if (count('data') < 2 && count('signature') < 2) expect(repeated).toBeUndefined();
        else expect(count(repeated ?? 'neither')).toBeGreaterThan(1);
      }),
      { numRuns: 2000 },
    );
  });
});
