import { createHmac } from 'node:crypto';
import { duration, nonEmptyString, optionalFunction, optionError } from '../option-checks.js';
import { ApiError } from './api-errors.js';

/**
 * What a request signature is computed over: the method, the path with its query as sent, and the body ('' for a
 * GET).
 *
 * @example
 * const request: SignableRequest = { method: 'GET', path: '/api/v1/pos/…/orders/o-1/purchase?callback=true', body: '', apiKey };
 */
export interface SignableRequest {
  /** `GET` for the re-sends. */
  readonly method: string;
  /** Path and query, e.g. `/api/v1/pos/<pos_id>/orders/<order_id>/purchase?callback=true`. */
  readonly path: string;
  /** The body as sent; '' without one. */
  readonly body: string;
  /** `API_KEY`, as sent in `X-API-AUTH`. */
  readonly apiKey: string;
}

/**
 * Computes `<SIGNATURE>` of `X-API-AUTH: SVC-HMAC-SHA256 <API_KEY>:<SIGNATURE>` (spec part 5 does not show how).
 *
 * @example
 * const signRequest: RequestSigner = ({ method, path, body }) => myHmac(`${method}${path}${body}`);
 */
export type RequestSigner = (request: SignableRequest) => string | Promise<string>;

/**
 * The default request signature: HMAC-SHA256 keyed with the API secret over `METHOD\nPATH?QUERY\nBODY`, as
 * lowercase hex. The spec does not show the service's computation (see docs/assumptions.md): pass `signRequest`
 * when the service expects another.
 *
 * @example
 * const signer = hmacRequestSigner(process.env.PAYMENT_API_SECRET!);
 * signer({ method: 'GET', path: '/api/v1/…', body: '', apiKey }); // '3f1c…' (64 hex digits)
 */
export function hmacRequestSigner(apiSecret: string): RequestSigner {
  nonEmptyString('apiSecret', apiSecret, false);
  return ({ method, path, body }) =>
    createHmac('sha256', apiSecret).update(`${method}\n${path}\n${body}`).digest('hex');
}

/**
 * Where the service's API is and how to authenticate to it (spec part 5).
 *
 * @example
 * const api: ApiClientOptions = { baseUrl: 'https://api.payments.example', posId, apiKey, endpointsKey, apiSecret };
 */
export interface ApiClientOptions {
  /** The service's `{base_url}`, http or https. */
  baseUrl: string;
  /** The project (`pos_id`). */
  posId: string;
  /** `API_KEY` of `X-API-AUTH`. */
  apiKey: string;
  /** `ENDPOINTS_KEY`, sent as `X-API-KEY`. */
  endpointsKey: string;
  /** The secret the default signer (`hmacRequestSigner`) keys with; not needed with `signRequest`. */
  apiSecret?: string;
  /** Computes the request signature; default `hmacRequestSigner(apiSecret)`. */
  signRequest?: RequestSigner;
  /**
   * The longest one call may take, answer body included.
   * @default 10_000
   */
  timeoutMs?: number;
}

/**
 * One re-send: an operation of an order (4.3), or one charge of a recurring payment by `transactionId` (4.4).
 *
 * @example
 * await client.resend({ orderId: 'order-1', operation: 'refund' });
 */
export interface ResendRequest {
  /** The merchant's `order_id`. */
  orderId: string;
  /** @default 'purchase' */
  operation?: string;
  /** One transaction of a recurring payment; without it the service answers the latest. */
  transactionId?: string;
}

/**
 * The service's answer to a re-send: its status, and the record it carried when the body was a JSON object
 * (4.4 answers the payment record; 4.3's body is not shown).
 *
 * @example
 * const { status, record } = await client.resend({ orderId: 'order-1' });
 */
export interface ResendAnswer {
  /** The HTTP status, a 2xx. */
  readonly status: number;
  /** The JSON object answered, or `undefined` for an empty or non-JSON body. */
  readonly record: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The calls of the service's API that webhooks need.
 *
 * @example
 * const answer = await client.resend({ orderId: 'order-1', transactionId });
 */
export interface ApiClient {
  /** Asks the service to deliver the webhook again (spec 4.3, 4.4). @throws {ApiError} one subclass per failure. */
  resend(request: ResendRequest): Promise<ResendAnswer>;
}

/** The operation path segment: a word, so it cannot reach another endpoint. */
const OPERATION = /^[a-z][a-z0-9_]*$/i;

/**
 * Creates a client of the service's API with the headers of spec part 5, over the runtime's `fetch` (no
 * dependency). Every failure is an `ApiError` subclass with a stable `code`; no message carries a key, a
 * signature or a record.
 *
 * @example
 * const client = createApiClient({ baseUrl, posId, apiKey, endpointsKey, apiSecret });
 * const { record } = await client.resend({ orderId: 'order-1' });
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const settings = checkedSettings(options);
  return {
    async resend(request) {
      const path = resendPath(settings, request);
      const answer = await call(settings, 'GET', path);
      if (answer.status < 200 || answer.status >= 300) throw failure('GET', path, answer);
      return { status: answer.status, record: parseObject(answer.text) };
    },
  };
}

/** The options checked once, with their defaults. */
interface Settings {
  readonly base: URL;
  readonly posId: string;
  readonly apiKey: string;
  readonly endpointsKey: string;
  readonly signRequest: RequestSigner;
  readonly timeoutMs: number;
}

function checkedSettings(options: ApiClientOptions): Settings {
  const base = checkedBaseUrl(options.baseUrl);
  const posId = nonEmptyString('posId', options.posId);
  const apiKey = nonEmptyString('apiKey', options.apiKey, false);
  const endpointsKey = nonEmptyString('endpointsKey', options.endpointsKey, false);
  if (/\s|:/.test(apiKey)) {
    throw optionError('apiKey', 'free of whitespace and colons (the X-API-AUTH shape)', apiKey, false);
  }
  const signer = optionalFunction('signRequest', options.signRequest);
  if (signer === undefined && options.apiSecret === undefined) {
    throw new TypeError(
      '[@payhook/core] the API client needs apiSecret (for the default HMAC-SHA256 request signature) or signRequest.',
    );
  }
  // A timer: AbortSignal.timeout past 2^31 - 1 ms fires at once, and every call would fail api.timeout.
  const timeoutMs = duration('timeoutMs', options.timeoutMs, 10_000);
  const signRequest = signer ?? hmacRequestSigner(options.apiSecret as string);
  return { base, posId, apiKey, endpointsKey, signRequest, timeoutMs };
}

/** `…/api/v1/pos/<pos_id>/orders/<order_id>/<operation>?callback=true[&transactionId=]` under the base path. */
function resendPath(settings: Settings, request: ResendRequest): string {
  const operation = request.operation ?? 'purchase';
  if (typeof request.orderId !== 'string' || request.orderId === '') {
    throw new TypeError('[@payhook/core] orderId must be a non-empty string.');
  }
  if (!OPERATION.test(operation)) {
    throw new TypeError(
      `[@payhook/core] operation must be a word such as purchase, not ${JSON.stringify(operation)}.`,
    );
  }
  const query = new URLSearchParams({ callback: 'true' });
  if (request.transactionId !== undefined) query.set('transactionId', request.transactionId);
  const order = encodeURIComponent(request.orderId);
  return `${settings.base.pathname}api/v1/pos/${encodeURIComponent(settings.posId)}/orders/${order}/${operation}?${query}`;
}

/** One signed call; a failure to get any answer becomes an `ApiError` coded `api.timeout` or `api.network`. */
async function call(
  settings: Settings,
  method: string,
  path: string,
): Promise<{ status: number; text: string }> {
  const what = `${method} ${path}`;
  const signature = await settings.signRequest({ method, path, body: '', apiKey: settings.apiKey });
  if (typeof signature !== 'string' || signature === '' || /\s/.test(signature)) {
    throw new TypeError('[@payhook/core] signRequest must return a non-empty string without whitespace.');
  }
  try {
    const response = await fetch(new URL(path, settings.base.origin), {
      method,
      headers: {
        accept: 'application/json',
        'x-api-auth': `SVC-HMAC-SHA256 ${settings.apiKey}:${signature}`,
        'x-api-key': settings.endpointsKey,
      },
      redirect: 'manual',
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    if (isTimeout(error)) {
      throw new ApiError('api.timeout', `${what}: no answer within ${settings.timeoutMs} ms.`);
    }
    const message = `${what}: the service could not be reached (${reason(error)}).`;
    throw new ApiError('api.network', message, { cause: error });
  }
}

function checkedBaseUrl(value: string): URL {
  const expected =
    'an absolute http or https URL without credentials (they belong in apiKey and endpointsKey)';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw optionError('baseUrl', expected, value, false);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') {
    throw optionError('baseUrl', expected, value, false);
  }
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  url.search = '';
  url.hash = '';
  return url;
}

/** The error a non-2xx answer stands for, with the service's `{"message","args":{"code"}}` when it sent one. */
function failure(method: string, path: string, answer: { status: number; text: string }): ApiError {
  const body = serviceError(answer.text);
  const said = body.serviceCode
    ? ` (${body.serviceCode}${body.serviceMessage ? `: ${body.serviceMessage}` : ''})`
    : '';
  const what = `${method} ${path} answered ${answer.status}${said}`;
  const details = { status: answer.status, ...body };
  if (answer.status === 401 || answer.status === 403) {
    return new ApiError(
      'api.unauthorized',
      `${what}: check apiKey, endpointsKey, the request signature and posId.`,
      details,
    );
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

/** The service's error body; its message is shortened, as it is echoed in ours. */
function serviceError(text: string): { serviceCode?: string; serviceMessage?: string } {
  const body = parseObject(text);
  const args = body?.args as { code?: unknown } | undefined;
  const code = typeof args?.code === 'string' ? args.code.slice(0, 32) : undefined;
  const message = typeof body?.message === 'string' ? body.message.slice(0, 200) : undefined;
  return { ...(code ? { serviceCode: code } : {}), ...(message ? { serviceMessage: message } : {}) };
}

function parseObject(text: string): Record<string, unknown> | undefined {
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

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

/** fetch's `fetch failed` says nothing: the code of its cause does (ECONNREFUSED, ENOTFOUND). */
function reason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  return error instanceof Error ? error.message : String(error);
}
