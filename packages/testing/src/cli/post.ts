import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { printable } from './io.js';

/** What an answer may hold before the rest is dropped: a CLI prints at most 300 characters of it. */
const MAX_ANSWER_BYTES = 1_048_576;

/**
 * One request with node:http(s), so a connection the server drops is an error, never a silently dropped promise.
 * `body` undefined sends none (a GET). An answer past 1 MiB is cut there and the connection closed: a server that
 * never stops sending must not fill the memory.
 */
export function httpCall(
  method: 'GET' | 'POST',
  url: URL,
  headers: Readonly<Record<string, string>>,
  body: string | undefined,
  timeoutMs: number,
): Promise<{
  status: number;
  text: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const length: Record<string, string> =
    body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const req = send(url, { method, headers: { ...headers, ...length } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () =>
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(chunks).toString('utf8'),
          headers: res.headers,
        });
      res.on('data', (chunk: Buffer) => {
        if (size >= MAX_ANSWER_BYTES) return;
        chunks.push(chunk.subarray(0, MAX_ANSWER_BYTES - size));
        size += chunk.length;
        if (size >= MAX_ANSWER_BYTES) {
          done();
          req.destroy();
        }
      });
      res.on('end', done);
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** One POST of `body`. */
export function post(
  url: URL,
  headers: Readonly<Record<string, string>>,
  body: string,
  timeoutMs: number,
): Promise<{
  status: number;
  text: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}> {
  return httpCall('POST', url, headers, body, timeoutMs);
}

/** A reply as printed: the first 300 characters, then `…`. */
export function clipReply(reply: string): string {
  return reply.length > 300 ? `${reply.slice(0, 300)}…` : reply;
}

/** A request that got no answer, as printed: the error's message and its system code. */
export function noAnswer(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return `no answer: ${printable(error instanceof Error ? error.message : String(error))}${code ? ` (${code})` : ''}`;
}
