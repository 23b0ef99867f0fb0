import { type Answer, readAnswer } from './api-answer.js';
import { ApiError } from './api-errors.js';
import type { RequestSigner } from './request-signer.js';
import type { PaymentRegistry } from './watched-create.js';

// One signed call to the service's API, shared by every method of the client.

export interface Settings {
  readonly base: URL;
  readonly posId: string;
  readonly apiKey: string;
  readonly endpointsKey: string;
  readonly signRequest: RequestSigner;
  readonly timeoutMs: number;
  readonly authScheme: string;
  /** `<authScheme>-HMAC-SHA256`, the `X-API-AUTH` prefix. */
  readonly authPrefix: string;
  /**
   * The `<authScheme> <API_KEY>:<API_SECRET>` form of `X-API-AUTH` (`authForm: 'secret'`): the header itself,
   * sent unsigned; `undefined` for the signed form.
   */
  readonly secretAuth: string | undefined;
  readonly maxAnswerBytes: number;
  readonly strict: boolean;
  readonly sector: string | undefined;
  readonly watch: PaymentRegistry | undefined;
  /** The configured credentials out of what the service says. */
  readonly redact: (text: string, more?: readonly string[]) => string;
}

/**
 * A path segment percent-encoded. `.` and `..` stay as they are under `encodeURIComponent`, and the URL standard
 * removes them (and their `%2e` spellings) from a path, so the request would reach another path: refused.
 */
export function segment(name: string, value: string): string {
  if (value === '.' || value === '..') {
    throw new TypeError(
      `[@payhook/payments] ${name} ${JSON.stringify(value)} cannot be sent as a path segment: URL normalisation removes it, and the request would reach another path.`,
    );
  }
  return encodeURIComponent(value);
}

/**
 * One signed call, the signature computed over the path and query as the URL sends them; a failure to get any
 * answer becomes an `ApiError` coded `api.timeout` (with `timeoutHint`: how to learn what happened) or
 * `api.network`.
 */
export async function call(
  settings: Settings,
  method: string,
  built: string,
  body = '',
  timeoutHint = '',
): Promise<{ answer: Answer; path: string; redact: (text: string) => string; location: string | null }> {
  const url = new URL(built, settings.base.origin);
  const path = `${url.pathname}${url.search}`;
  const what = `${method} ${path}`;
  // One deadline for the whole call: a signer that never settles (a KMS that stopped answering) ends it too.
  const signal = AbortSignal.timeout(settings.timeoutMs);
  const signature =
    settings.secretAuth === undefined ? await signed(settings, { method, path, body }, signal, what) : '';
  const auth = settings.secretAuth ?? `${settings.authPrefix} ${settings.apiKey}:${signature}`;
  const redact = (text: string) => settings.redact(text, signature === '' ? [auth] : [auth, signature]);
  try {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-api-auth': auth,
      'x-api-key': settings.endpointsKey,
    };
    if (body !== '') headers['content-type'] = 'application/json';
    const response = await fetch(url, {
      method,
      headers,
      ...(body !== '' ? { body } : {}),
      redirect: 'manual',
      signal,
    });
    const location = response.headers.get('location');
    return { answer: await readAnswer(response, settings.maxAnswerBytes), path, redact, location };
  } catch (error) {
    if (isTimeout(error)) {
      // A POST is never retried: the service may have acted before the answer was lost.
      throw new ApiError('api.timeout', `${what}: no answer within ${settings.timeoutMs} ms.${timeoutHint}`);
    }
    const message = `${what}: the service could not be reached (${reason(error)}).`;
    throw new ApiError('api.network', message, { cause: error });
  }
}

/** `signRequest`'s signature, checked; `api.timeout` when the call's deadline passes first (nothing was sent). */
async function signed(
  settings: Settings,
  request: { method: string; path: string; body: string },
  signal: AbortSignal,
  what: string,
): Promise<string> {
  let onAbort = () => {};
  const timedOut = new Promise<never>((_, reject) => {
    onAbort = () => {
      const message = `${what}: signRequest gave no signature within ${settings.timeoutMs} ms (timeoutMs); nothing was sent.`;
      reject(new ApiError('api.timeout', message));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const signing = settings.signRequest({ ...request, apiKey: settings.apiKey });
    const signature = await Promise.race([signing, timedOut]);
    if (typeof signature !== 'string' || signature === '' || /\s/.test(signature)) {
      throw new TypeError(
        '[@payhook/payments] signRequest must return a non-empty string without whitespace.',
      );
    }
    return signature;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

const isTimeout = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');

/** fetch's `fetch failed` says nothing: the code of its cause does (ECONNREFUSED, ENOTFOUND). */
function reason(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
}
