import { RequestError } from '../errors.js';
import { type JsonProblem, parseJsonObject } from '../notification/parse.js';
import { chunkBytes, concatBytes, utf8Bytes, utf8Length, utf8Text } from '../runtime/bytes.js';
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

/**
 * The body's bytes as received, for a check over them before the envelope is read (the `relay` option's SHA-256):
 * raw bytes or text a framework kept, or the stream, read within the limits. An object a body parser built has lost
 * them: 500 `relay.body_unavailable`.
 */
export async function readRawBody(request: BodySource, limits: BodyLimits): Promise<Uint8Array | string> {
  const { maxBodyBytes, readTimeoutMs } = limits;
  const length = getHeader(request.headers, 'content-length');
  if (length !== undefined && Number(length) > maxBodyBytes) throw tooLarge(maxBodyBytes);
  const body = request.body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    if ((typeof body === 'string' ? utf8Length(body) : body.length) > maxBodyBytes)
      throw tooLarge(maxBodyBytes);
    return body;
  }
  const parsed = body !== null && typeof body === 'object' && !isStream(body) && !isEmptyObject(body);
  const stream = body !== null && typeof body === 'object' && isStream(body) ? body : request.stream;
  if (parsed || stream === undefined || isConsumed(stream)) {
    throw new RequestError(
      'relay.body_unavailable',
      'a delivery through the relay is checked against the bytes it carried, and a body parser kept only an object: mount the webhook before body parsers, or keep the raw body (e.g. express.raw) and pass it as body.',
    );
  }
  return readStream(stream, maxBodyBytes, readTimeoutMs);
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

// Reading a stream under the limits: a Node readable through its events (paused, not destroyed, on a refusal), any
// other (a web ReadableStream, an async iterable) through its iterator.

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
    const deadline = setTimeout(() => refuse(timeoutError(timeoutMs)), timeoutMs);
    // Function declarations, not arrows: the listeners are this reader's steps, named where a stack trace shows them.
    function onData(chunk: Uint8Array | string): void {
      if (settled) return;
      const bytes = typeof chunk === 'string' ? utf8Bytes(chunk) : chunk;
      size += bytes.length;
      if (size > limit) refuse(tooLarge(limit));
      else chunks.push(bytes);
    }
    function onEnd(): void {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      // After 'end' the stream emits nothing more that matters ('close' too: not called for nothing).
      stream.removeListener('close', onClose);
      resolve(chunks.length === 1 ? chunks[0]! : concatBytes(chunks, size));
    }
    // Errors are built only while they can still be the answer: 'close' always comes once the response is sent.
    function onError(cause: unknown): void {
      if (!settled)
        refuse(new RequestError('payload.malformed', 'the request body could not be read.', { cause }));
    }
    function onClose(): void {
      if (!settled)
        refuse(new RequestError('payload.malformed', 'the request was closed before its body ended.'));
    }
    function refuse(error: RequestError): void {
      settled = true;
      clearTimeout(deadline);
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onError);
      stream.removeListener('close', onClose);
      stream.pause();
      reject(error);
    }
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
