import {
  duration,
  nonEmptyString,
  objectWith,
  optionalFunction,
  optionError,
  positiveInteger,
} from '../option-checks.js';
import { type Answer, failure, parseObject, readAnswer } from './api-answer.js';
import { ApiError } from './api-errors.js';
import {
  type CreatedPayment,
  type CreatePaymentRequest,
  type CreateSplitPaymentRequest,
  cardRedactor,
  createdFrom,
  prepareCreate,
} from './create-payment.js';
import { createRedactor } from './redact.js';
import { hmacRequestSigner, type RequestSigner } from './request-signer.js';
import { type PaymentRegistry, sendWatched } from './watched-create.js';

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
  /**
   * The secret the default signer (`hmacRequestSigner`) keys with; not needed with `signRequest`, but give it when
   * your `signRequest` uses it: every credential given is redacted from what the service's errors echo.
   */
  apiSecret?: string;
  /** Computes the request signature; default `hmacRequestSigner(apiSecret)`. */
  signRequest?: RequestSigner;
  /**
   * The scheme word of `X-API-AUTH: <authScheme>-HMAC-SHA256 <API_KEY>:<SIGNATURE>`: letters, digits and `-`.
   * The spec writes the neutral `SVC`; the real service has its own word: set it. A value already ending in
   * `-HMAC-SHA256` (any case) is sent as is, not doubled.
   * @default 'SVC'
   */
  authScheme?: string;
  /**
   * The largest answer body read, in bytes; a longer one is abandoned unread (`api.answer_too_large`).
   * @default 1_048_576 (1 MiB)
   */
  maxAnswerBytes?: number;
  /**
   * The longest one call may take, from its signature (`signRequest`) to the last byte of the answer.
   * @default 10_000
   */
  timeoutMs?: number;
  /**
   * `createPayment` and `createSplitPayment` check every rule of `@payhook/payments`, also those the spec
   * does not show the service enforcing (a payment's `description` and `currency`, split amounts adding up).
   * @default false (the service's known rules, the fake service's default level)
   */
  strict?: boolean;
  /** The merchant's sector: `microfinance` and `igaming` add required customer fields (spec 4.1). */
  sector?: 'microfinance' | 'igaming' | (string & {});
  /** A payment watch (`createPaymentWatch`): every payment is registered before its create is sent. */
  watch?: PaymentRegistry;
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
 * The re-send calls the reconciler needs: an `ApiClient`, or your own wrapper of one.
 *
 * @example
 * const api: ResendClient = { resend: (request) => client.resend(request) };
 */
export interface ResendClient {
  /** The project asked about; the reconciler refuses a record of another. */
  readonly posId?: string;
  /** Asks the service to deliver the webhook again (spec 4.3, 4.4). @throws {ApiError} one subclass per failure. */
  resend(request: ResendRequest): Promise<ResendAnswer>;
}

/**
 * The calls of the service's API: creating payments (spec 4.1, 4.2, 4.5) and re-sending webhooks (4.3, 4.4).
 *
 * @example
 * const created = await client.createPayment({ mode: 'hosted', method: 'purchase', amount: 12.5, order_id: 'o-1' });
 */
export interface ApiClient extends ResendClient {
  /**
   * Creates a payment, hosted or direct, a subscription with `init_recurring` (spec 4.1, 4.5). The request is
   * checked first and nothing is sent when it breaks a rule; card data goes only over HTTPS (or to loopback).
   * Never retried: after a timeout the service may have created the payment, and a second create could charge
   * twice; learn whether the order exists through `resend({ orderId })` or its webhook.
   * @throws {ApiError} `api.request_invalid` (every field named), `api.insecure_transport`, `api.order_exists`, and as `resend`.
   */
  createPayment(request: CreatePaymentRequest): Promise<CreatedPayment>;
  /** Creates a split payment (spec 4.2), as `createPayment`. @throws {ApiError} as `createPayment`. */
  createSplitPayment(request: CreateSplitPaymentRequest): Promise<CreatedPayment>;
}

/** The operation path segment: a word, so it cannot reach another endpoint. */
const OPERATION = /^[a-z][a-z0-9_]*$/i;
const AUTH_SCHEME = /^[a-z0-9-]+$/i;
const HMAC_SUFFIX = /-HMAC-SHA256$/i;

/**
 * Creates a client of the service's API with the headers of spec part 5, over the runtime's `fetch` (no
 * dependency). Every failure is an `ApiError` with a stable `code`; no message carries a key, a signature or a
 * record, even when the service's error body echoes them.
 *
 * @example
 * const client = createApiClient({ baseUrl, posId, apiKey, endpointsKey, apiSecret });
 * const { record } = await client.resend({ orderId: 'order-1' });
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const settings = checkedSettings(options);
  return {
    posId: settings.posId,
    async resend(request) {
      const { answer, path, redact } = await call(settings, 'GET', resendPath(settings, request));
      if (answer.status < 200 || answer.status >= 300) {
        const { authScheme } = settings;
        throw failure(
          { method: 'GET', path, authScheme, defaultScheme: authScheme === 'SVC', redact },
          answer,
        );
      }
      if (answer.text === undefined) {
        throw new ApiError(
          'api.answer_too_large',
          `GET ${path} answered ${answer.status} with a body over maxAnswerBytes (${settings.maxAnswerBytes} bytes): left unread; raise maxAnswerBytes if the service's records are that large.`,
          { status: answer.status },
        );
      }
      return { status: answer.status, record: parseObject(answer.text) };
    },
    createPayment: (request) => create(settings, false, request),
    createSplitPayment: (request) => create(settings, true, request),
  };
}

/** One create, checked before it is sent and sent once. */
async function create(settings: Settings, split: boolean, request: object): Promise<CreatedPayment> {
  const { base, posId, strict, sector, authScheme } = settings;
  const prepared = prepareCreate(request, { split, posId, base, strict, sector });
  const built = `${base.pathname}api/v1/${split ? 'split/purchase' : 'payment'}`;
  return sendWatched(settings.watch, request, split, async () => {
    const { answer, path, redact, location } = await call(settings, 'POST', built, prepared.body);
    const redact2 = cardRedactor(redact, prepared.cardValues);
    const failed = { method: 'POST', path, authScheme, defaultScheme: authScheme === 'SVC', redact: redact2 };
    return createdFrom(failed, answer, location, base);
  });
}

interface Settings {
  readonly base: URL;
  readonly posId: string;
  readonly apiKey: string;
  readonly endpointsKey: string;
  readonly signRequest: RequestSigner;
  readonly timeoutMs: number;
  readonly authScheme: string;
  /** `<authScheme>-HMAC-SHA256`, the `X-API-AUTH` prefix. */
  readonly authPrefix: string;
  readonly maxAnswerBytes: number;
  readonly strict: boolean;
  readonly sector: string | undefined;
  readonly watch: PaymentRegistry | undefined;
  /** The configured credentials out of what the service says. */
  readonly redact: (text: string, more?: readonly string[]) => string;
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
      '[@payhook/payments] the API client needs apiSecret (for the default HMAC-SHA256 request signature) or signRequest.',
    );
  }
  // A timer: AbortSignal.timeout past 2^31 - 1 ms fires at once, and every call would fail api.timeout.
  const timeoutMs = duration('timeoutMs', options.timeoutMs, 10_000);
  const authScheme = options.authScheme ?? 'SVC';
  if (typeof authScheme !== 'string' || !AUTH_SCHEME.test(authScheme)) {
    throw new TypeError(
      `[@payhook/payments] authScheme must be a word of letters, digits and '-' (the service's, e.g. in its X-API-AUTH examples), not ${JSON.stringify(authScheme)}.`,
    );
  }
  const maxAnswerBytes = positiveInteger('maxAnswerBytes', options.maxAnswerBytes, 1_048_576);
  segment('posId', posId);
  const signRequest = signer ?? hmacRequestSigner(options.apiSecret as string);
  const authPrefix = HMAC_SUFFIX.test(authScheme) ? authScheme : `${authScheme}-HMAC-SHA256`;
  const redact = createRedactor([apiKey, endpointsKey, options.apiSecret]);
  return {
    base,
    posId,
    apiKey,
    endpointsKey,
    signRequest,
    timeoutMs,
    authScheme,
    authPrefix,
    maxAnswerBytes,
    strict: options.strict === true,
    sector: options.sector,
    watch:
      options.watch &&
      objectWith<PaymentRegistry>('watch', options.watch, ['register', 'forget'], 'a payment watch'),
    redact,
  };
}

/**
 * A path segment percent-encoded. `.` and `..` stay as they are under `encodeURIComponent`, and the URL standard
 * removes them (and their `%2e` spellings) from a path, so the request would reach another path: refused.
 */
function segment(name: string, value: string): string {
  if (value === '.' || value === '..') {
    throw new TypeError(
      `[@payhook/payments] ${name} ${JSON.stringify(value)} cannot be sent as a path segment: URL normalisation removes it, and the request would reach another path.`,
    );
  }
  return encodeURIComponent(value);
}

/** `…/api/v1/pos/<pos_id>/orders/<order_id>/<operation>?callback=true[&transactionId=]` under the base path. */
function resendPath(settings: Settings, request: ResendRequest): string {
  const operation = request.operation ?? 'purchase';
  if (typeof request.orderId !== 'string' || request.orderId === '') {
    throw new TypeError('[@payhook/payments] orderId must be a non-empty string.');
  }
  if (!OPERATION.test(operation)) {
    throw new TypeError(
      `[@payhook/payments] operation must be a word such as purchase, not ${JSON.stringify(operation)}.`,
    );
  }
  const query = new URLSearchParams({ callback: 'true' });
  if (request.transactionId !== undefined) query.set('transactionId', request.transactionId);
  const pos = segment('posId', settings.posId);
  const order = segment('orderId', request.orderId);
  return `${settings.base.pathname}api/v1/pos/${pos}/orders/${order}/${operation}?${query}`;
}

/**
 * One signed call, the signature computed over the path and query as the URL sends them; a failure to get any
 * answer becomes an `ApiError` coded `api.timeout` or `api.network`.
 */
async function call(
  settings: Settings,
  method: string,
  built: string,
  body = '',
): Promise<{ answer: Answer; path: string; redact: (text: string) => string; location: string | null }> {
  const url = new URL(built, settings.base.origin);
  const path = `${url.pathname}${url.search}`;
  const what = `${method} ${path}`;
  // One deadline for the whole call: a signer that never settles (a KMS that stopped answering) ends it too.
  const signal = AbortSignal.timeout(settings.timeoutMs);
  const signature = await signed(settings, { method, path, body }, signal, what);
  const auth = `${settings.authPrefix} ${settings.apiKey}:${signature}`;
  const redact = (text: string) => settings.redact(text, [auth, signature]);
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
      // A create is never retried: the service may have created the payment before the answer was lost.
      const hint =
        method === 'POST'
          ? ' The payment may exist: do not create it again; ask with resend({ orderId }) or wait for its webhook.'
          : '';
      throw new ApiError('api.timeout', `${what}: no answer within ${settings.timeoutMs} ms.${hint}`);
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
