import { validatePaymentRequest } from './validate.js';
import { validateSplitPurchaseRequest } from './validate-split.js';
import {
  isPlainObject,
  type ValidationOptions,
  type ValidationResult,
  type Violation,
} from './violations.js';

/**
 * Options of `validateAtServiceLevel`: the validators' own, plus which request and how strictly.
 *
 * @example
 * const options: ServiceLevelOptions = { split: true, strict: false, sector: 'igaming' };
 */
export interface ServiceLevelOptions extends ValidationOptions {
  /** A `/split/purchase` body (spec 4.2) rather than a `/payment` one (4.1, 4.5). @default false */
  split?: boolean;
  /** Every rule of the validators, over the request as sent. @default false */
  strict?: boolean;
}

/**
 * What `validateAtServiceLevel` found, and the request to go on with.
 *
 * @example
 * const { valid, violations, request } = validateAtServiceLevel(body);
 */
export interface ServiceLevelResult extends ValidationResult {
  /** The request as the service is known to read it (see `validateAtServiceLevel`); as sent under `strict`. */
  request: unknown;
}

/** Card data fields (spec 4.1): a hosted request's are left to the service, which collects the card itself. */
export const CARD_DATA_FIELDS = [
  'cc_number',
  'card_cvv',
  'cc_cvv',
  'exp_month',
  'exp_year',
  'cc_token',
] as const;

/**
 * The currency of a payment that names none, unless strict: the spec does not mark `currency` required on a
 * request, but every notification carries one (6.1). See docs/assumptions.md.
 */
const DEFAULT_CURRENCY = 'UAH';

/**
 * Core's rules the spec does not show the service enforcing (docs/assumptions.md, "The fake's strict mode"):
 * only under `strict`, because a check stricter than the service refuses a merchant's valid request. A split
 * purchase's `description` and `currency` are required by the spec (4.2), so they stay required there.
 */
function onlyStrict(violation: Violation, split: boolean): boolean {
  const payment = !split && violation.code === 'required';
  return (
    (payment && (violation.field === 'description' || violation.field === 'currency')) ||
    violation.code === 'recurring.method'
  );
}

/**
 * A field sent as `''` counts as not sent, as public plugins leave one out (`customer_email: ''`); a required
 * one is then still refused as missing.
 */
function withoutEmptyStrings(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== ''));
}

/** The e-mail the vendor's own plugins send for a guest without one (public-facts, "guests"). */
const GUEST_EMAIL = 'unregistered';

/**
 * What the service could accept where the spec says nothing: a field sent empty (left out), a card number with
 * spaces (digits kept), card fields on a hosted request (dropped), no currency on a payment (`UAH`), an expiry
 * month or year as a numeric string (`"07"`, `"2030"`, as some public code sends them: read as the number).
 */
function lenient(body: unknown, split: boolean): unknown {
  if (!isPlainObject(body)) return body;
  const out = withoutEmptyStrings(body);
  if (isPlainObject(out.init_recurring)) out.init_recurring = withoutEmptyStrings(out.init_recurring);
  if (out.currency === undefined && !split) out.currency = DEFAULT_CURRENCY;
  if (typeof out.cc_number === 'string') out.cc_number = out.cc_number.replace(/ /g, '');
  for (const field of ['exp_month', 'exp_year'] as const) {
    const value = out[field];
    if (typeof value === 'string' && /^\d{1,4}$/.test(value)) out[field] = Number(value);
  }
  if (out.mode === 'hosted') for (const field of CARD_DATA_FIELDS) delete out[field];
  return out;
}

/**
 * Checks a `/payment` or `/split/purchase` body at the level the service is known to enforce: the level of the
 * fake service (`@payhook/testing`) and of the API client (`createPayment`) by default, every rule with `strict`.
 * By default the request is first read as the service could (a field sent `''` left out, a card number's spaces
 * dropped, a hosted request's card fields ignored, a payment without `currency` taken as `UAH`, `exp_month` and
 * `exp_year` sent as numeric strings read as numbers, the guest e-mail `unregistered` accepted), and a payment's
 * `description` and `currency`, `purchase` with `init_recurring` and split amounts adding up (`splitSum`
 * `ignore`) are not required; `strict` checks the request as sent, with `splitSum` `equal`.
 *
 * @example
 * const { valid, violations } = validateAtServiceLevel(body, { split: false });
 * if (!valid) console.warn(violations.map((v) => `${v.field}: ${v.code}`));
 */
export function validateAtServiceLevel(body: unknown, options: ServiceLevelOptions = {}): ServiceLevelResult {
  const { split = false, strict = false, ...rest } = options;
  const request = strict ? body : lenient(body, split);
  const context = { ...rest, splitSum: rest.splitSum ?? (strict ? 'equal' : 'ignore') };
  const result = split
    ? validateSplitPurchaseRequest(request, context)
    : validatePaymentRequest(request, context);
  // The guest placeholder is a String, all the spec types `customer_email` as: only strict checks its format.
  const guest = isPlainObject(request) && request.customer_email === GUEST_EMAIL;
  const violations = strict
    ? result.violations
    : result.violations.filter(
        (v) => !onlyStrict(v, split) && !(guest && v.field === 'customer_email' && v.code === 'format.email'),
      );
  return { valid: violations.length === 0, violations, request };
}
