import { RequestError } from '../errors.js';
import { type JsonProblem, parseJsonObject } from '../notification/json-object.js';
import { chunkBytes, concatBytes, isUtf8, utf8Bytes, utf8Length, utf8Text } from '../runtime/utf8.js';

/** The two fields of a delivery (spec 2.6), exactly as received. */
export interface Envelope {
  readonly data: string;
  readonly signature: string;
}

/** Header bags payhook reads: Node's `IncomingHttpHeaders`, a plain record, or a Fetch `Headers`. */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>> | Headers;

/** A body still to be read: a Node readable, a web `ReadableStream`, or any async iterable of bytes. */
export type BodyStream =
  | NodeJS.ReadableStream
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>;

export type MediaType = 'form' | 'json';

/** Reads one header, whatever the bag's shape (Node keys are lower-case; `Headers` is case-insensitive). */
export function getHeader(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | readonly string[] | undefined>)[name];
  return typeof value === 'string' ? value : value?.[0];
}

/** `form` or `json` from a Content-Type header, or a 415 error. */
export function mediaTypeOf(contentType: string | undefined): MediaType {
  if (contentType === 'application/x-www-form-urlencoded') return 'form';
  const type = contentType === undefined ? undefined : contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') return 'form';
  if (type === 'application/json' || (type?.startsWith('application/') && type.endsWith('+json')))
    return 'json';
  throw new RequestError(
    'media_type.unsupported',
    `Content-Type ${JSON.stringify(type ?? '')} is not accepted: the service posts application/x-www-form-urlencoded (application/json is also read).`,
  );
}

function fieldMissing(name: string): RequestError {
  return new RequestError(
    'payload.field_missing',
    `the delivery has no ${name} field: expected data and signature.`,
  );
}

function fieldRepeated(name: string): RequestError {
  return new RequestError('payload.field_repeated', `the field ${name} appears more than once.`);
}

/**
 * The most fields a form envelope, or values a JSON envelope, may have; the service sends two. As body-parser's
 * `parameterLimit`: past it the body is refused before any per-field work, so no shape costs more than a scan.
 */
export const MAX_ENVELOPE_FIELDS = 1000;

function tooManyFields(): RequestError {
  return new RequestError(
    'payload.too_large',
    `the body has more than ${MAX_ENVELOPE_FIELDS} fields or JSON values: a delivery has two fields, data and signature.`,
  );
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

function malformedEscape(): RequestError {
  return new RequestError('payload.malformed', 'the form body has a malformed percent-escape.');
}

function decodeFormValue(value: string): string {
  const percent = value.indexOf('%');
  if (percent === -1 && !value.includes('+')) return value;
  // Base64 values carry one escape, their padding (`%3D`, at most twice, at the end): no general decoding needed.
  if (percent !== -1 && isEscapedPadding(value, percent) && !value.includes('+')) {
    return value.slice(0, percent) + (value.length - percent === 3 ? '=' : '==');
  }
  return decodeEscapes(value);
}

/** Hex digit values by character code, -1 for anything else. */
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

function isEscapedPadding(value: string, from: number): boolean {
  const rest = value.length - from;
  if (rest !== 3 && rest !== 6) return false;
  for (let i = from; i < value.length; i += 3) {
    // '%', '3', then 'D' or 'd'
    if (
      value.charCodeAt(i) !== 37 ||
      value.charCodeAt(i + 1) !== 51 ||
      (value.charCodeAt(i + 2) | 0x20) !== 100
    ) {
      return false;
    }
  }
  return true;
}

/** The envelope field a form field name stands for, once decoded as standard form parsers decode names. */
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

function isBracketed(name: string, field: string): boolean {
  return name.startsWith(field) && name.charCodeAt(field.length) === 91 && name.includes(']', field.length);
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

/**
 * Picks `data` and `signature` from an object a body parser (form or JSON, as `type` says) already built, or
 * JSON.parse did.
 */
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

function notAString(name: string): RequestError {
  return new RequestError('payload.malformed', `the field ${name} is not a string.`);
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

/** The index of the quote that closes the JSON string opening at `open` (one not escaped by a backslash). */
function stringEnd(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(close - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return close;
    close = text.indexOf('"', close + 1);
  }
}

/** Reads a raw body (bytes or text) of the given media type into an envelope. */
export function parseRawBody(body: Uint8Array | string, type: MediaType): Envelope {
  const text = typeof body === 'string' ? body : utf8Text(body);
  if (type === 'form') return parseForm(text);
  if (!hasAtMostJsonValues(text, MAX_ENVELOPE_FIELDS)) throw tooManyFields();
  const value = parseJsonObject(text, envelopeRefused);
  const repeated = repeatedJsonField(text);
  if (repeated !== undefined) throw fieldRepeated(repeated);
  return envelopeFromObject(value, 'json');
}

function envelopeRefused(problem: JsonProblem): RequestError {
  return new RequestError(
    'payload.malformed',
    problem === 'not_json'
      ? 'the JSON envelope is not valid JSON.'
      : 'the JSON envelope is not an object with data and signature.',
  );
}

function tooLarge(limit: number): RequestError {
  return new RequestError(
    'payload.too_large',
    `the body is larger than the ${limit}-byte limit (maxBodyBytes).`,
  );
}

function isNodeReadable(stream: BodyStream): stream is NodeJS.ReadableStream {
  return (
    typeof (stream as NodeJS.ReadableStream).on === 'function' &&
    typeof (stream as NodeJS.ReadableStream).pause === 'function'
  );
}

/** True when a stream was read to its end by someone else (a body parser), so nothing is left to read. */
function isConsumed(stream: BodyStream): boolean {
  const s = stream as {
    readableEnded?: boolean;
    destroyed?: boolean;
    readable?: boolean;
    locked?: boolean;
    bodyUsed?: boolean;
  };
  if (isNodeReadable(stream)) return s.readableEnded === true || s.destroyed === true || s.readable === false;
  return s.locked === true;
}

/**
 * Reads a body stream to bytes, refusing past `limit` bytes (413) or when the sender stalls for longer than
 * `timeoutMs` in all (408). A Node stream is paused, not destroyed, on refusal, so the answer can still be sent
 * (with `Connection: close`, which frees the socket).
 */
function readStream(stream: BodyStream, limit: number, timeoutMs: number): Promise<Uint8Array> {
  if (isNodeReadable(stream)) return readNodeStream(stream, limit, timeoutMs);
  return readIterable(stream, limit, timeoutMs);
}

function timeoutError(timeoutMs: number): RequestError {
  return new RequestError(
    'payload.timeout',
    `the body did not arrive within ${timeoutMs} ms (readTimeoutMs).`,
  );
}

function readNodeStream(
  stream: NodeJS.ReadableStream,
  limit: number,
  timeoutMs: number,
): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: unknown, value?: Uint8Array) => {
      settled = true;
      clearTimeout(deadline);
      // After 'end' the stream emits nothing more that matters: the listeners go with the request.
      if (!error) return resolve(value!);
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      stream.removeListener('close', onClose);
      stream.pause();
      reject(error);
    };
    const onData = (chunk: Uint8Array | string) => {
      if (settled) return;
      const bytes = typeof chunk === 'string' ? utf8Bytes(chunk) : chunk;
      size += bytes.length;
      if (size > limit) finish(tooLarge(limit));
      else chunks.push(bytes);
    };
    const onEnd = () => {
      if (!settled) finish(undefined, chunks.length === 1 ? chunks[0]! : concatBytes(chunks, size));
    };
    // Errors are built only while they can still be the answer: 'close' always comes once the response is sent.
    const onError = (cause: unknown) => {
      if (!settled)
        finish(new RequestError('payload.malformed', 'the request body could not be read.', { cause }));
    };
    const onClose = () => {
      if (!settled)
        finish(new RequestError('payload.malformed', 'the request was closed before its body ended.'));
    };
    const deadline = setTimeout(() => finish(timeoutError(timeoutMs)), timeoutMs);
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
    stream.resume();
  });
}

async function readIterable(
  stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>,
  limit: number,
  timeoutMs: number,
): Promise<Uint8Array> {
  const iterator = (stream as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeoutError(timeoutMs)), timeoutMs);
  });
  try {
    for (;;) {
      const step = await Promise.race([iterator.next(), deadline]);
      if (step.done) break;
      const bytes = chunkBytes(step.value);
      size += bytes.length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(bytes);
    }
    return concatBytes(chunks, size);
  } catch (error) {
    void iterator.return?.()?.catch(() => undefined);
    if (error instanceof RequestError) throw error;
    throw new RequestError('payload.malformed', 'the request body could not be read.', { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** The body size and time limits of `readEnvelope`. */
export interface BodyLimits {
  readonly maxBodyBytes: number;
  readonly readTimeoutMs: number;
}

/** What `readEnvelope` needs of a request (the handler's `WebhookRequest`). */
export interface BodySource {
  readonly headers: HeaderBag;
  readonly body?: unknown;
  readonly stream?: BodyStream;
}

/**
 * The envelope of a request, from the first place that holds its body: raw bytes or text a framework kept, an
 * object a body parser built (both returned as they are), or the stream, read here within the limits (a promise).
 */
export function readEnvelope(
  request: BodySource,
  type: MediaType,
  limits: BodyLimits,
): Envelope | Promise<Envelope> {
  const { maxBodyBytes, readTimeoutMs } = limits;
  const length = getHeader(request.headers, 'content-length');
  if (length !== undefined && Number(length) > maxBodyBytes) throw tooLarge(maxBodyBytes);
  const body = request.body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    if (body.length > maxBodyBytes) throw tooLarge(maxBodyBytes);
    // A text counts in UTF-8 bytes, up to three per character: measured only when it could be over.
    if (typeof body === 'string' && body.length * 3 > maxBodyBytes && utf8Length(body) > maxBodyBytes)
      throw tooLarge(maxBodyBytes);
    return parseRawBody(body, type);
  }
  if (body !== null && typeof body === 'object') {
    if (isStream(body))
      return readStream(body, maxBodyBytes, readTimeoutMs).then((bytes) => parseRawBody(bytes, type));
    if (!isEmptyObject(body) || !request.stream || isConsumed(request.stream))
      return envelopeFromObject(body, type);
  }
  if (request.stream) {
    if (isConsumed(request.stream)) {
      throw new RequestError(
        'body.consumed',
        'the request body was already read by another middleware and nothing was kept: mount the webhook before body parsers, or keep the raw body (e.g. express.raw or a verify callback) and pass it as body.',
      );
    }
    return readStream(request.stream, maxBodyBytes, readTimeoutMs).then((bytes) => parseRawBody(bytes, type));
  }
  return envelopeFromObject({});
}

function isEmptyObject(value: object): boolean {
  for (const _ in value) return false;
  return true;
}

function isStream(value: object): value is BodyStream {
  return (
    typeof (value as NodeJS.ReadableStream).pipe === 'function' ||
    typeof (value as ReadableStream).getReader === 'function' ||
    (typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' && !Array.isArray(value))
  );
}
