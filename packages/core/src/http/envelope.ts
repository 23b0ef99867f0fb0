import { RequestError } from '../errors.js';
import type { Envelope, MediaType } from './request.js';

export function fieldMissing(name: string): RequestError {
  return new RequestError(
    'payload.field_missing',
    `the delivery has no ${name} field: expected data and signature.`,
  );
}

export function fieldRepeated(name: string): RequestError {
  return new RequestError('payload.field_repeated', `the field ${name} appears more than once.`);
}

/**
 * The most fields a form envelope, or values a JSON envelope, may have; the service sends two. As body-parser's
 * `parameterLimit`: past it the body is refused before any per-field work, so no shape costs more than a scan.
 */
export const MAX_ENVELOPE_FIELDS = 1000;

export function tooManyFields(): RequestError {
  return new RequestError(
    'payload.too_large',
    `the body has more than ${MAX_ENVELOPE_FIELDS} fields or JSON values: a delivery has two fields, data and signature.`,
  );
}

export function isBracketed(name: string, field: string): boolean {
  return name.startsWith(field) && name.charCodeAt(field.length) === 91 && name.includes(']', field.length);
}

export function envelopeFromObject(body: object, type: MediaType = 'form'): Envelope {
  // A parser without nested names (body-parser's `extended: false`) keeps `data[a]` as a key, where qs
  // (`extended: true`, koa's parsers) makes `data` an object or a list: both answer as qs's users see it.
  for (const key in body) {
    if (isBracketed(key, 'data')) throw notAString('data');
    if (isBracketed(key, 'signature')) throw notAString('signature');
  }
  const { data, signature } = body as { data?: unknown; signature?: unknown };
  return { data: fieldOf('data', data, type), signature: fieldOf('signature', signature, type) };
}

function fieldOf(name: string, value: unknown, type: MediaType): string {
  if (typeof value === 'string') return value;
  // A list of strings is qs's reading of a repeated name (`data=a&data=b`); any other list, of a nested one
  // (`data[]=1`, `data=a&data[b]=1`), answered as the raw reader answers that name. JSON has no such reading:
  // a list there is what the sender wrote, a field of the wrong type.
  if (
    type === 'form' &&
    Array.isArray(value) &&
    value.length > 1 &&
    value.every((item) => typeof item === 'string')
  )
    throw fieldRepeated(name);
  if (value === undefined || value === null) throw fieldMissing(name);
  throw notAString(name);
}

export function notAString(name: string): RequestError {
  return new RequestError('payload.malformed', `the field ${name} is not a string.`);
}

/**
 * True when `text` has at most `limit` of the characters `,`, `[` and `{` (in strings too), so JSON.parse makes at
 * most `limit + 1` values of it: the cost of parsing grows with values, not bytes. Each character is looked for
 * with `indexOf` from past its last find (memchr speed; bench/README.md, "Why the body readers look as they do").
 */
export function hasAtMostJsonValues(text: string, limit: number): boolean {
  let comma = text.indexOf(',');
  let bracket = text.indexOf('[');
  let brace = text.indexOf('{');
  for (let count = 0; ; count++) {
    const next = Math.min(
      comma < 0 ? Number.POSITIVE_INFINITY : comma,
      bracket < 0 ? Number.POSITIVE_INFINITY : bracket,
      brace < 0 ? Number.POSITIVE_INFINITY : brace,
    );
    if (next === Number.POSITIVE_INFINITY) return true;
    if (count === limit) return false;
    if (next === comma) comma = text.indexOf(',', next + 1);
    else if (next === bracket) bracket = text.indexOf('[', next + 1);
    else brace = text.indexOf('{', next + 1);
  }
}

/**
 * The first of `data` and `signature` that is a key of the top-level object more than once, in a text that
 * JSON.parse read (which keeps the last). Without a backslash a key is spelled as it is, so one occurrence of each
 * quoted name settles it at memchr speed; otherwise one pass over the text, stepping over strings with `indexOf`.
 */
export function repeatedJsonField(text: string): 'data' | 'signature' | undefined {
  if (!text.includes('\\') && occursOnce(text, '"data"') && occursOnce(text, '"signature"')) return undefined;
  let depth = 0;
  let atKey = false;
  let data = false;
  let signature = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 34) {
      const end = stringEnd(text, i);
      if (atKey && depth === 1) {
        const key: unknown = JSON.parse(text.slice(i, end + 1));
        if (key === 'data') {
          if (data) return 'data';
          data = true;
        } else if (key === 'signature') {
          if (signature) return 'signature';
          signature = true;
        }
      }
      atKey = false;
      i = end;
    } else if (char === 123 || char === 91) {
      depth++;
      atKey = depth === 1;
    } else if (char === 125 || char === 93) {
      depth--;
    } else if (char === 44) {
      atKey = depth === 1;
    }
  }
  return undefined;
}

function occursOnce(text: string, part: string): boolean {
  const first = text.indexOf(part);
  return first === -1 || text.indexOf(part, first + part.length) === -1;
}

function stringEnd(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return close;
    close = text.indexOf('"', close + 1);
  }
}
