import { RequestError } from '../errors.js';
import { type JsonProblem, parseJsonObject } from '../notification/parse.js';
import { utf8Length, utf8Text } from '../runtime/utf8.js';
import {
  envelopeFromObject,
  fieldRepeated,
  hasAtMostJsonValues,
  MAX_ENVELOPE_FIELDS,
  repeatedJsonField,
  tooManyFields,
} from './envelope.js';
import { parseForm } from './form.js';
import type { BodyStream, Envelope, HeaderBag, MediaType } from './request.js';
import { isConsumed, readStream, tooLarge } from './stream.js';

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

export interface BodyLimits {
  readonly maxBodyBytes: number;
  readonly readTimeoutMs: number;
}

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
