import { RequestError } from '../errors.js';
import { chunkBytes, concatBytes, utf8Bytes } from '../runtime/utf8.js';
import type { BodyStream } from './request.js';

export function tooLarge(limit: number): RequestError {
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
export function isConsumed(stream: BodyStream): boolean {
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
export function readStream(stream: BodyStream, limit: number, timeoutMs: number): Promise<Uint8Array> {
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
