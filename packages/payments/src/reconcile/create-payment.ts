import type { PaymentRecord, PaymentRequest, SplitPurchaseRequest } from '../validation/requests.js';
import { CARD_DATA_FIELDS, validateAtServiceLevel } from '../validation/service-level.js';
import { hasControlCharacter } from '../watch/contract.js';
import { type Answer, type FailedCall, failure, parseObject } from './api-answer.js';
import { ApiError, type ApiViolation } from './api-errors.js';

/**
 * A `POST /api/v1/payment` body (spec 4.1, 4.5): `pos_id` defaults to the client's; `description` and `currency`
 * may be left out, as the service accepts (checked only under `strict`).
 *
 * @example
 * const request: CreatePaymentRequest = { mode: 'hosted', method: 'purchase', amount: 12.5, currency: 'UAH', order_id: 'o-1' };
 */
export type CreatePaymentRequest = Omit<PaymentRequest, 'pos_id' | 'description' | 'currency'> & {
  pos_id?: string;
  description?: string;
  currency?: string;
};

/**
 * A `POST /api/v1/split/purchase` body (spec 4.2); `pos_id` defaults to the client's.
 *
 * @example
 * const request: CreateSplitPaymentRequest = { ...purchase, split: [{ amount: 10, sub_merchant_id }] };
 */
export type CreateSplitPaymentRequest = Omit<SplitPurchaseRequest, 'pos_id'> & { pos_id?: string };

/**
 * What creating a payment answered: a hosted payment's checkout (the 303's `Location`, where the customer goes),
 * or a direct payment's record (`status` `pending` with `user_action_url` when 3-D Secure must follow).
 *
 * @example
 * const created = await client.createPayment(request);
 * if (created.kind === 'hosted') return res.redirect(303, created.checkoutUrl);
 * if (created.record.user_action_required) return res.redirect(303, created.record.user_action_url!);
 */
export type CreatedPayment =
  | { readonly kind: 'hosted'; readonly checkoutUrl: string; readonly checkoutId: string | undefined }
  | { readonly kind: 'direct'; readonly record: PaymentRecord };

export interface CreateChecks {
  readonly split: boolean;
  readonly posId: string;
  readonly base: URL;
  /** Every rule of core's validators, not only those the service is known to enforce. */
  readonly strict: boolean;
  readonly sector: string | undefined;
}

/** A create request checked and ready: its body, and the card values to keep out of any error. */
export interface PreparedCreate {
  readonly body: string;
  readonly cardValues: readonly string[];
}

const SECRET_CARD_FIELDS = ['cc_number', 'card_cvv', 'cc_cvv', 'cc_token'] as const;
/** Hosts a request may reach over plain http with card data or the API secret: this machine only. */
export const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;
/** A card number however written (13 to 19 digits, spaces or dashes between), in what the service echoes. */
const CARD_NUMBER_SHAPE = /\b(?:\d[ -]?){12,18}\d\b/g;
const CHECKOUT_PATH = /\/checkout\/([^/]+)\/form\/?$/;

/**
 * Checks a create request before anything leaves the process: card data (PCI DSS scope) only over HTTPS (or to
 * loopback), then `validateAtServiceLevel`, the fake service's level (every rule with `strict`). The body is
 * sent as given: the lenient reading is only checked.
 * @throws {ApiError} `api.insecure_transport`, `api.request_invalid` (every field named in one error).
 */
export function prepareCreate(request: unknown, checks: CreateChecks): PreparedCreate {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) {
    throw new TypeError('[@payhook/payments] a create request must be an object.');
  }
  const body: Record<string, unknown> = { pos_id: checks.posId, ...request };
  const where = `POST ${checks.base.pathname}api/v1/${checks.split ? 'split/purchase' : 'payment'}`;
  const cardFields = CARD_DATA_FIELDS.filter((field) => body[field] !== undefined);
  if (cardFields.length > 0 && checks.base.protocol !== 'https:' && !LOOPBACK.test(checks.base.hostname)) {
    throw new ApiError(
      'api.insecure_transport',
      `${where} not sent: card data (${cardFields.join(', ')}) goes only over HTTPS (PCI DSS); baseUrl is plain http to ${checks.base.hostname}, which is not loopback.`,
    );
  }
  const { split, strict, sector } = checks;
  const { violations: checked } = validateAtServiceLevel(body, {
    split,
    strict,
    ...(sector !== undefined ? { sector } : {}),
  });
  const violations = [...checked, ...unaskable(body.order_id)];
  if (violations.length > 0) {
    const list = violations.map((v) => `${v.field || 'request'} (${v.code}: ${v.message})`).join('; ');
    throw new ApiError(
      'api.request_invalid',
      `${where} not sent: ${violations.length} ${violations.length === 1 ? 'field breaks' : 'fields break'} the service's rules: ${list}`,
      { violations: violations.map(({ field, code }) => ({ field, code })) },
    );
  }
  const cardValues = SECRET_CARD_FIELDS.map((field) => body[field]).filter(
    (value): value is string => typeof value === 'string' && value !== '',
  );
  return { body: JSON.stringify(body), cardValues };
}

/**
 * An order id the service could take but payhook could never ask about again (a re-send puts it in the path, where
 * `.` and `..` are dot segments), or keep watched (a control or bidi character): refused before it is sent.
 */
function unaskable(orderId: unknown): { field: string; code: string; message: string }[] {
  if (orderId === '.' || orderId === '..') {
    const message = 'a dot segment: no re-send can name it, so the payment could never be reconciled';
    return [{ field: 'order_id', code: 'order_id.unaskable', message }];
  }
  if (typeof orderId === 'string' && hasControlCharacter(orderId)) {
    const message = 'holds a control or bidi character';
    return [{ field: 'order_id', code: 'order_id.control_character', message }];
  }
  return [];
}

/**
 * A create's answer, typed: 303 with `Location` is a hosted checkout (any other 3xx `api.answer_invalid`), a 2xx JSON record a direct payment; the
 * service's error bodies become `ApiError` (409 `api.order_exists`, 400 with violations `api.request_invalid`).
 */
export function createdFrom(
  call: FailedCall,
  answer: Answer,
  location: string | null,
  base: URL,
): CreatedPayment {
  const what = `${call.method} ${call.path} answered ${answer.status}`;
  if (answer.status === 303 && location) return hostedFrom(location, base, what);
  if (answer.status < 200 || answer.status >= 300) throw createFailure(call, answer);
  if (answer.text === undefined) {
    throw new ApiError('api.answer_too_large', `${what} with a body over maxAnswerBytes: left unread.`, {
      status: answer.status,
    });
  }
  const record = parseObject(answer.text);
  if (record === undefined || typeof record.payment_id !== 'string' || typeof record.status !== 'string') {
    throw new ApiError(
      'api.answer_invalid',
      `${what} without a payment record (a JSON object with payment_id and status).`,
      { status: answer.status },
    );
  }
  return { kind: 'direct', record: record as unknown as PaymentRecord };
}

/**
 * Spec 4.1: a hosted create answers 303 and nothing else. Any other 3xx (an http→https upgrade of the API path, a
 * login page) is `failure`'s `api.answer_invalid`: no payment exists behind it.
 */
function hostedFrom(location: string, base: URL, what: string): CreatedPayment {
  const invalid = (why: string) =>
    new ApiError('api.answer_invalid', `${what} with a Location that ${why}; check baseUrl.`, {
      status: 303,
    });
  let url: URL;
  try {
    url = new URL(location, base);
  } catch {
    throw invalid('is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('is not an http(s) address');
  const rawId = CHECKOUT_PATH.exec(url.pathname)?.[1];
  let checkoutId: string | undefined;
  try {
    checkoutId = rawId && decodeURIComponent(rawId);
  } catch {
    throw invalid('holds a checkout id that cannot be percent-decoded');
  }
  return { kind: 'hosted', checkoutUrl: url.href, checkoutId };
}

function createFailure(call: FailedCall, answer: Answer): ApiError {
  const base = failure(call, answer);
  const details = {
    status: answer.status,
    ...(base.serviceCode !== undefined ? { serviceCode: base.serviceCode } : {}),
    ...(base.serviceMessage !== undefined ? { serviceMessage: base.serviceMessage } : {}),
  };
  const said = base.serviceCode ? ` (${base.serviceCode})` : '';
  const what = `${call.method} ${call.path} answered ${answer.status}${said}`;
  if (answer.status === 409) {
    return new ApiError(
      'api.order_exists',
      `${what}: the service already has this order_id. Learn its outcome through resend({ orderId }) or its webhook; create a new order only with a new order_id.`,
      details,
    );
  }
  const violations = serviceViolations(answer.text ?? '', call.redact);
  if (answer.status === 400 && violations !== undefined) {
    const fields = violations.map((v) => `${v.field} (${v.code})`).join(', ');
    return new ApiError('api.request_invalid', `${what}: the service refused ${fields}.`, {
      ...details,
      violations,
    });
  }
  return base;
}

/** `args.violations` of a `V-400` body: field and code only, the service's messages may echo values. */
function serviceViolations(text: string, redact: (text: string) => string): ApiViolation[] | undefined {
  const listed = (parseObject(text)?.args as { violations?: unknown } | undefined)?.violations;
  if (!Array.isArray(listed)) return undefined;
  const out: ApiViolation[] = [];
  for (const item of listed.slice(0, 50)) {
    const { field, code } = (item ?? {}) as { field?: unknown; code?: unknown };
    if (typeof field === 'string' && typeof code === 'string') {
      out.push({ field: redact(field).slice(0, 100), code: redact(code).slice(0, 64) });
    }
  }
  return out;
}

/** Card numbers and the request's card values out of what the service echoes, on top of the credentials. */
export function cardRedactor(
  redact: (text: string) => string,
  cardValues: readonly string[],
): (text: string) => string {
  const values = [...cardValues].sort((a, b) => b.length - a.length);
  return (text) => {
    // The request's own values first: a CVV just before a grouped card number would otherwise join the number's
    // shape and leave its last group behind.
    let out = redact(text);
    for (const value of values) out = out.split(value).join('[redacted]');
    return out.replace(CARD_NUMBER_SHAPE, '[redacted]');
  };
}
