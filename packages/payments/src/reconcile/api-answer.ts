import { ApiError } from './api-errors.js';

/** An answer of the service: its status and body text, or `undefined` for a body past the size bound. */
export interface Answer {
  readonly status: number;
  readonly text: string | undefined;
}

/**
 * The body as text, read chunk by chunk and abandoned (the stream cancelled) past `maxBytes`: a huge answer is
 * never held whole. `undefined` when it is longer than that, whether its `Content-Length` says so or not.
 */
export async function readAnswer(response: Response, maxBytes: number): Promise<Answer> {
  const status = response.status;
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (response.body === null) return { status, text: '' };
  if (declared > maxBytes) {
    await response.body.cancel();
    return { status, text: undefined };
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    bytes += chunk.value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel();
      return { status, text: undefined };
    }
    text += decoder.decode(chunk.value, { stream: true });
  }
  return { status, text: text + decoder.decode() };
}

export interface FailedCall {
  readonly method: string;
  readonly path: string;
  /** The scheme word sent, and whether it is the default `SVC`. */
  readonly authScheme: string;
  readonly defaultScheme: boolean;
  readonly redact: (text: string) => string;
}

/**
 * The error a non-2xx answer stands for, with the service's `{"message","args":{"code"}}` when it sent one,
 * credentials redacted from it.
 */
export function failure(call: FailedCall, answer: Answer): ApiError {
  const body = serviceError(answer.text ?? '', call.redact);
  const said = body.serviceCode
    ? ` (${body.serviceCode}${body.serviceMessage ? `: ${body.serviceMessage}` : ''})`
    : '';
  const what = `${call.method} ${call.path} answered ${answer.status}${said}`;
  const details = { status: answer.status, ...body };
  if (answer.status === 401 || answer.status === 403) {
    return new ApiError('api.unauthorized', `${what}: ${unauthorizedHint(call)}`, details);
  }
  if (answer.status === 404)
    return new ApiError('api.not_found', `${what}: the service knows no such order.`, details);
  if (answer.status >= 500)
    return new ApiError('api.server', `${what}: the service failed; ask again later.`, details);
  if (answer.status >= 300 && answer.status < 400) {
    return new ApiError(
      'api.answer_invalid',
      `${what}: a redirect, where the API answers directly; check baseUrl.`,
      details,
    );
  }
  return new ApiError('api.refused', `${what}.`, details);
}

/** A 401 most likely means the scheme word or the signature is not the service's (spec 5 shows neither). */
function unauthorizedHint(call: FailedCall): string {
  const scheme = call.defaultScheme
    ? `authScheme (sent "${call.authScheme}", the spec's stand-in for the service's own word: set the word your service uses)`
    : `authScheme (sent "${call.authScheme}")`;
  return `the likely causes are ${scheme} and the request signature (signRequest, or apiSecret for the default HMAC-SHA256 of the body); then check apiKey, endpointsKey and posId.`;
}

/** The service's error body, redacted before its message is shortened (a cut credential would slip past). */
function serviceError(
  text: string,
  redact: (text: string) => string,
): { serviceCode?: string; serviceMessage?: string } {
  const body = parseObject(text);
  const args = body?.args as { code?: unknown } | undefined;
  const code = typeof args?.code === 'string' ? redact(args.code).slice(0, 32) : undefined;
  const message = typeof body?.message === 'string' ? redact(body.message).slice(0, 200) : undefined;
  return { ...(code ? { serviceCode: code } : {}), ...(message ? { serviceMessage: message } : {}) };
}

/** A JSON object, or `undefined` for anything else (empty, not JSON, an array). */
export function parseObject(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
