import { CUSTOMER_FIELDS } from '../notification/customer-fields.js';
/**
 * Fields masked by default wherever they appear in a notification: the card token and mask, the card data spec 2.1
 * says the payment record echoes from a direct request (number, expiry, CVV under both its names), every
 * customer detail spec 2.1 lists, the request echoes of spec 2.3 that identify the customer or carry card data
 * (`browser_fingerprint`, `cryptogram`), and the two links that work for whoever holds them (the receipt, the 3DS
 * step), and every name starting with `customer` or `payer` (the README's `customer_*`: a nested `customer` object,
 * `customer_name`, `payer_email`) or naming an `email` or `phone` alone. Names are compared without regard to case or
 * the separators `_` and `-`; an entry ending in `*` masks every name starting with what comes before it.
 */
export const DEFAULT_MASKED_FIELDS: readonly string[] = [
  'cc_token',
  'cc_mask',
  'cc_token_expiration',
  'cc_number',
  'exp_month',
  'exp_year',
  'card_cvv',
  'cc_cvv',
  'cryptogram',
  'browser_fingerprint',
  ...CUSTOMER_FIELDS,
  'customer_tax_id',
  'customer_referrer',
  'customer_lang',
  'customer_*',
  'payer_*',
  'email',
  'phone',
  'receipt_url',
  'user_action_url',
];

/** What a masked value becomes (a string, so a replayed notification still parses). */
const MASKED = '[masked]';

/**
 * Names that are card data whatever `mask` says: the spec's `cc_*` fields, anything naming a card (`card`,
 * `cardNumber`, `card_holder`), a CVV, CVC or security code, an expiry, a PAN, a cryptogram. Tested on the name
 * without case or separators.
 */
const CARD_NAME = /^cc|card|cvv|cvc|securitycode|expiry|expdate|cryptogram|^pan$|pan$/;

/** A digit as a card number may be written: ASCII or full-width (what an East Asian keyboard types). */
const DIGIT = '[0-9\\uff10-\\uff19]';
/** One separator between groups: a space (plain, no-break, figure, thin, narrow no-break), a dash or a dot. */
const SEPARATOR = '[ .\\-\\u00a0\\u2007\\u2009\\u202f]';
/**
 * 13 to 19 digits, alone or grouped by single separators (`4111 1111 1111 1111`, `4111.1111…`), not part of a
 * longer run.
 */
const DIGIT_RUN = new RegExp(
  `(?<!${DIGIT}${SEPARATOR}?)${DIGIT}(?:${SEPARATOR}?${DIGIT}){12,18}(?!${SEPARATOR}?${DIGIT})`,
  'g',
);
/** A JSON integer past 2^53 kept none of its last digits: below 10^19 it may have been a card number. */
const CARD_SIZED_UNSAFE = 1e19;

function normalName(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, '');
}

/**
 * Masks values in a notification: by name (the `fields` given, and card-like names always) at any depth, and any
 * number that passes the Luhn check wherever it appears, JSON text inside a string included. What `createCapture`
 * masks with, for a tool that shows deliveries it did not capture (`payhook inspect` over a live fake service).
 *
 * @example
 * const mask = createMasker(DEFAULT_MASKED_FIELDS);
 * mask({ order_id: 'o-1', cc_token: 'tok_…' }); // { order_id: 'o-1', cc_token: '[masked]' }
 */
export function createMasker(fields: readonly string[]): (value: unknown) => unknown {
  const names = new Set(fields.filter((f) => !f.endsWith('*')).map(normalName));
  const prefixes = fields.filter((f) => f.endsWith('*')).map((f) => normalName(f.slice(0, -1)));
  // A notification's names repeat from one delivery to the next: each is judged once (up to a bound).
  const judged = new Map<string, boolean>();
  const isMasked = (name: string): boolean => {
    let masked = judged.get(name);
    if (masked === undefined) {
      const normal = normalName(name);
      masked = names.has(normal) || CARD_NAME.test(normal) || prefixes.some((p) => normal.startsWith(p));
      if (judged.size < 1_000) judged.set(name, masked);
    }
    return masked;
  };
  // Counts replacements, so JSON text inside a string is written again only when something in it was masked.
  let changes = 0;
  const mask = (value: unknown): unknown => {
    if (typeof value === 'string') return maskString(value);
    if (typeof value === 'number') {
      const size = Math.abs(value);
      const unknowable =
        Number.isInteger(value) && size > Number.MAX_SAFE_INTEGER && size < CARD_SIZED_UNSAFE;
      if (!unknowable && maskCardNumbers(String(value)) === String(value)) return value;
      changes++;
      return MASKED;
    }
    if (Array.isArray(value)) return value.map(mask);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) {
      const key = maskCardNumbers(name);
      if (key !== name) changes++;
      if (isMasked(name) && item !== undefined && item !== null) {
        changes++;
        out[key] = MASKED;
      } else {
        out[key] = mask(item);
      }
    }
    return out;
  };
  // A string holding a JSON object or array (`payload`) is masked as one; unchanged, it keeps its own spelling.
  const maskString = (text: string): string => {
    const first = text.trimStart()[0];
    if (first === '{' || first === '[') {
      const before = changes;
      try {
        const masked = mask(JSON.parse(text));
        return changes === before ? text : JSON.stringify(masked);
      } catch {
        // Not JSON after all: plain text.
      }
    }
    const masked = maskCardNumbers(text);
    if (masked !== text) changes++;
    return masked;
  };
  return mask;
}

/** `text` with every 13–19 digit run (ASCII or full-width) that passes the Luhn check (a card number) replaced by `[masked]`. */
export function maskCardNumbers(text: string): string {
  if (text.length < 13 || !hasDigitRun(text)) return text;
  return text.replace(DIGIT_RUN, (run) => (passesLuhn(run) ? MASKED : run));
}

/**
 * Whether `text` has 13 digits in a run (single separators allowed between them), the regular expression's
 * precondition checked in one pass: most strings (ids, UUIDs, times) have none, and the capture runs per delivery.
 */
function hasDigitRun(text: string): boolean {
  let run = 0;
  let afterDigit = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (digitOf(code) >= 0) {
      if (++run >= 13) return true;
      afterDigit = true;
    } else if (afterDigit && isSeparator(code)) {
      afterDigit = false;
    } else {
      run = 0;
      afterDigit = false;
    }
  }
  return false;
}

/** The value of an ASCII or full-width digit, -1 for anything else. */
function digitOf(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 0xff10 && code <= 0xff19) return code - 0xff10;
  return -1;
}

function isSeparator(code: number): boolean {
  return (
    code === 32 ||
    code === 45 ||
    code === 46 ||
    code === 0xa0 ||
    code === 0x2007 ||
    code === 0x2009 ||
    code === 0x202f
  );
}

function passesLuhn(run: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = run.length - 1; index >= 0; index--) {
    const code = digitOf(run.charCodeAt(index));
    if (code < 0) continue;
    const digit = double ? code * 2 : code;
    sum += digit > 9 ? digit - 9 : digit;
    double = !double;
  }
  return sum % 10 === 0;
}
