import {
  duration,
  nonEmptyString,
  objectWith,
  optionalFunction,
  optionError,
  positiveInteger,
} from '../option-checks.js';
import type { OperationRecord } from '../validation/requests.js';
import { failure, parseObject } from './api-answer.js';
import { call, type Settings, segment } from './api-call.js';
import { ApiError } from './api-errors.js';
import {
  type CreatedPayment,
  type CreatePaymentRequest,
  type CreateSplitPaymentRequest,
  cardRedactor,
  createdFrom,
  LOOPBACK,
  prepareCreate,
} from './create-payment.js';
import { operate, operations, withAmount } from './operation-calls.js';
import type {
  CaptureRequest,
  OrderOperation,
  RefundRequest,
  SplitCaptureRequest,
  VoidRequest,
} from './operations.js';
import { splitCaptureBody, voidBody } from './operations.js';
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
   * How `X-API-AUTH` carries the credentials: `hmac`, `<authScheme>-HMAC-SHA256 <API_KEY>:<SIGNATURE>` (spec 5);
   * `secret`, `<authScheme> <API_KEY>:<API_SECRET>`, the form the vendor's plugins send (the secret itself travels:
   * only over HTTPS, or to loopback). `secret` needs `apiSecret` and ignores `signRequest`.
   * @default 'hmac'
   */
  authForm?: 'hmac' | 'secret';
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
 * The calls of the service's API: creating payments (spec 4.1, 4.2, 4.5), re-sending webhooks (4.3, 4.4), the
 * secondary operations of 2.2 (capture, void, refund) and the order's operations, as public merchant code calls
 * them. A capture, void or refund is never retried: after `api.timeout` its outcome is unknown, and
 * `getOperations` tells it.
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
  /**
   * Captures `amount` of an auth: `POST /api/v1/capture` with `order_amount`, `order_currency`, `charge_amount`.
   * Without `orderAmount` the order's operations are read first, and an amount above what is left is refused
   * before sending. Answers the capture's record (spec 2.2); its webhook follows (6.2).
   * @throws {ApiError} `api.request_invalid`, `api.amount_exceeded` (nothing sent), `api.timeout` (outcome unknown:
   * ask `getOperations`), `api.not_found`, `api.refused` (the service's code in `serviceCode`), and as `resend`.
   */
  capture(request: CaptureRequest): Promise<OperationRecord>;
  /**
   * Voids an uncaptured auth or an unrefunded purchase: `POST /api/v1/void`. Answers the void's record.
   * @throws {ApiError} as `capture`.
   */
  void(request: VoidRequest): Promise<OperationRecord>;
  /**
   * Refunds `amount` of a purchase or a captured auth, partly or in full: `POST /api/v1/refund` with
   * `order_amount`, `order_currency`, `refund_amount`; `orderAmount` as for `capture`. Answers the refund's record
   * (`status_code` `1004` on the service's response, spec 3.1; its webhook carries `receipt_url`).
   * @throws {ApiError} as `capture`.
   */
  refund(request: RefundRequest): Promise<OperationRecord>;
  /** Captures a split payment between sub-merchants: `POST /api/v1/split/capture`. @throws {ApiError} as `capture`. */
  splitCapture(request: SplitCaptureRequest): Promise<OperationRecord>;
  /**
   * The order's operations, oldest first: the payment (`auth`/`purchase`) and each capture, void and refund, as
   * `GET /api/v1/pos/<pos_id>/orders/<order_id>` answers them; the status query public code makes.
   * @throws {ApiError} `api.not_found` for an order the service does not know, and as `resend`.
   */
  getOperations(orderId: string): Promise<OrderOperation[]>;
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
    capture: (request) => withAmount(settings, 'capture', request),
    refund: (request) => withAmount(settings, 'refund', request),
    void: (request) => {
      const where = `POST ${settings.base.pathname}api/v1/void`;
      return operate(settings, 'void', request?.orderId, voidBody(where, request, settings.posId));
    },
    splitCapture: (request) => {
      const where = `POST ${settings.base.pathname}api/v1/split/capture`;
      const body = splitCaptureBody(where, request, settings.posId);
      return operate(settings, 'split capture', request.orderId, body);
    },
    getOperations: (orderId) => operations(settings, orderId),
  };
}

/** One create, checked before it is sent and sent once. */
async function create(settings: Settings, split: boolean, request: object): Promise<CreatedPayment> {
  const { base, posId, strict, sector, authScheme } = settings;
  const prepared = prepareCreate(request, { split, posId, base, strict, sector });
  const built = `${base.pathname}api/v1/${split ? 'split/purchase' : 'payment'}`;
  return sendWatched(settings.watch, request, split, async () => {
    const hint =
      ' The payment may exist: do not create it again; ask with resend({ orderId }) or wait for its webhook.';
    const { answer, path, redact, location } = await call(settings, 'POST', built, prepared.body, hint);
    const redact2 = cardRedactor(redact, prepared.cardValues);
    const failed = { method: 'POST', path, authScheme, defaultScheme: authScheme === 'SVC', redact: redact2 };
    return createdFrom(failed, answer, location, base);
  });
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
  const secretAuth = secretAuthOf(options, base, `${authScheme.replace(HMAC_SUFFIX, '')} ${apiKey}`);
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
    secretAuth,
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
 * The whole `X-API-AUTH` of `authForm: 'secret'` (`<word> <API_KEY>` then `:<API_SECRET>`), or `undefined` for the
 * signed form. The secret itself travels: only over https or to loopback.
 */
function secretAuthOf(options: ApiClientOptions, base: URL, wordAndKey: string): string | undefined {
  const authForm = options.authForm ?? 'hmac';
  if (authForm !== 'hmac' && authForm !== 'secret') {
    throw optionError('authForm', "'hmac' or 'secret'", authForm);
  }
  if (authForm === 'hmac') return undefined;
  if (typeof options.apiSecret !== 'string') {
    throw new TypeError(
      "[@payhook/payments] authForm 'secret' sends <authScheme> <API_KEY>:<API_SECRET>: it needs apiSecret.",
    );
  }
  if (base.protocol !== 'https:' && !LOOPBACK.test(base.hostname)) {
    throw new TypeError(
      `[@payhook/payments] authForm 'secret' sends the API secret itself in X-API-AUTH: only over https (or to loopback), and baseUrl is plain http to ${base.hostname}.`,
    );
  }
  return `${wordAndKey}:${nonEmptyString('apiSecret', options.apiSecret, false)}`;
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
