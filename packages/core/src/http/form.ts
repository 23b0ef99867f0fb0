import { RequestError } from '../errors.js';
import { isUtf8, utf8Bytes, utf8Text } from '../runtime/bytes.js';
import {
  fieldMissing,
  fieldRepeated,
  isBracketed,
  MAX_ENVELOPE_FIELDS,
  notAString,
  tooManyFields,
} from './envelope.js';
import type { Envelope } from './request.js';

function malformedEscape(): RequestError {
  return new RequestError('payload.malformed', 'the form body has a malformed percent-escape.');
}

function decodeFormValue(value: string): string {
  const percent = value.indexOf('%');
  if (percent === -1 && !value.includes('+')) return value;
  // Base64 values carry one escape, their padding (`%3D`, at most twice, at the end): no general decoding needed.
  const rest = value.length - percent;
  if (percent !== -1 && (rest === 3 || rest === 6) && !value.includes('+')) {
    // '%', '3', then 'D' or 'd', once or twice.
    let padding = true;
    for (let i = percent; i < value.length; i += 3) {
      const d = value.charCodeAt(i + 2) | 0x20;
      if (value.charCodeAt(i) !== 37 || value.charCodeAt(i + 1) !== 51 || d !== 100) padding = false;
    }
    if (padding) return value.slice(0, percent) + (rest === 3 ? '=' : '==');
  }
  return decodeEscapes(value);
}

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/**
 * A form value or name decoded (`+` as a space, then `%XX` escapes) in one pass over its UTF-8 bytes, where `+`
 * and `%` are only ever themselves; linear whatever the value (bench/README.md has the measurements).
 */
function decodeEscapes(value: string): string {
  const bytes = utf8Bytes(value);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (byte === 37) {
      const high = HEX[bytes[i + 1]!] ?? -1;
      const low = HEX[bytes[i + 2]!] ?? -1;
      if (high < 0 || low < 0) throw malformedEscape();
      bytes[length++] = (high << 4) | low;
      i += 2;
    } else {
      bytes[length++] = byte === 43 ? 32 : byte;
    }
  }
  const decoded = bytes.subarray(0, length);
  // decodeURIComponent refuses escapes that do not spell UTF-8; so does this.
  if (!isUtf8(decoded)) throw malformedEscape();
  return utf8Text(decoded);
}

type FieldName = 'data' | 'signature' | 'other';

/**
 * The field a form field name is: names are percent-decoded (`%64ata` is `data`), as URLSearchParams, qs and
 * querystring decode them, and one they cannot decode stays as it is (another field) as it does there. A name that
 * qs (body-parser `extended`, koa's parsers) would turn into an object or a list (`data[a]`, `data[]`) is refused
 * as a field that is not a string, the answer those parsers' users get.
 */
function fieldNameOf(raw: string): FieldName {
  let name = raw;
  if (raw.includes('%') || raw.includes('+')) {
    try {
      name = decodeEscapes(raw);
    } catch {
      return 'other';
    }
  }
  if (name === 'data' || name === 'signature') return name;
  if (isBracketed(name, 'data')) throw notAString('data');
  if (isBracketed(name, 'signature')) throw notAString('signature');
  return 'other';
}

/**
 * Picks `data` and `signature` out of a urlencoded body without a general parser; other fields are ignored. Each
 * field is read once from its start (one `indexOf` for its end, a prefix test for the service's own names, else
 * one look at the name alone), so the work is linear in the body whatever its shape, and stops at
 * `MAX_ENVELOPE_FIELDS`. A name without `=` is a field with an empty value, as in every form parser.
 */
export function parseForm(text: string): Envelope {
  let data: string | undefined;
  let signature: string | undefined;
  let fields = 0;
  let start = 0;
  while (start <= text.length) {
    if (++fields > MAX_ENVELOPE_FIELDS) throw tooManyFields();
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    let name: FieldName;
    let valueStart: number;
    if (text.startsWith('data=', start)) {
      name = 'data';
      valueStart = start + 5;
    } else if (text.startsWith('signature=', start)) {
      name = 'signature';
      valueStart = start + 10;
    } else {
      const field = text.slice(start, end);
      const equals = field.indexOf('=');
      name = fieldNameOf(equals === -1 ? field : field.slice(0, equals));
      valueStart = equals === -1 ? end : start + equals + 1;
    }
    if (name === 'data') {
      if (data !== undefined) throw fieldRepeated('data');
      data = decodeFormValue(text.slice(valueStart, end));
    } else if (name === 'signature') {
      if (signature !== undefined) throw fieldRepeated('signature');
      signature = decodeFormValue(text.slice(valueStart, end));
    }
    start = end + 1;
  }
  if (data === undefined) throw fieldMissing('data');
  if (signature === undefined) throw fieldMissing('signature');
  return { data, signature };
}
