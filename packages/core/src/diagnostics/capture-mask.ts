/**
 * Fields masked by default wherever they appear in a notification: the card token and mask, the card data spec 2.1
 * says the payment record echoes from a direct request (number, expiry, CVV under both its names), every
 * customer detail spec 2.1 lists, the request echoes of spec 2.3 that identify the customer or carry card data
 * (`browser_fingerprint`, `cryptogram`), and the two links that work for whoever holds them (the receipt, the 3DS
 * step). Names are compared without regard to case or the separators `_` and `-`.
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
  'customer_id',
  'customer_ip',
  'customer_fname',
  'customer_lname',
  'customer_patronym',
  'customer_email',
  'customer_phone',
  'customer_country',
  'customer_birthday',
  'customer_tax_id',
  'customer_referrer',
  'customer_lang',
  'receipt_url',
  'user_action_url',
];

/** What a masked value becomes (a string, so a replayed notification still parses). */
const MASKED = '[masked]';

/**
 * Names that are card data whatever `mask` says: the spec's `cc_*` fields, anything naming a card (`card`,
 * `cardNumber`, `card_holder`), a CVV or CVC, a PAN, a cryptogram. Tested on the name without case or separators.
 */
const CARD_NAME = /^cc|card|cvv|cvc|cryptogram|^pan$|pan$/;

/**
 * 13 to 19 digits, alone or grouped by single spaces or dashes (`4111 1111 1111 1111`), not part of a longer run.
 */
const DIGIT_RUN = /(?<![0-9][ -]?)[0-9](?:[ -]?[0-9]){12,18}(?![ -]?[0-9])/g;

/** `cardNumber`, `card_number` and `CARD-NUMBER` are one name. */
function normalName(name: string): string {
  return name.toLowerCase().replace(/[_-]/g, '');
}

/**
 * Masks values in a notification: by name (the `fields` given, and card-like names always) at any depth, and any
 * number that passes the Luhn check wherever it appears, JSON text inside a string included.
 */
export function createMasker(fields: readonly string[]): (value: unknown) => unknown {
  const names = new Set(fields.map(normalName));
  const isMasked = (name: string): boolean => {
    const normal = normalName(name);
    return names.has(normal) || CARD_NAME.test(normal);
  };
  const mask = (value: unknown): unknown => {
    if (typeof value === 'string') return maskText(value, mask);
    if (typeof value === 'number') return maskCardNumbers(String(value)) === String(value) ? value : MASKED;
    if (Array.isArray(value)) return value.map(mask);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [name, item] of Object.entries(value)) {
      out[maskCardNumbers(name)] =
        isMasked(name) && item !== undefined && item !== null ? MASKED : mask(item);
    }
    return out;
  };
  return mask;
}

/** A string's card numbers masked; a string holding a JSON object or array is masked as one (`payload`). */
function maskText(text: string, mask: (value: unknown) => unknown): string {
  const first = text.trimStart()[0];
  if (first === '{' || first === '[') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return maskCardNumbers(text);
    }
    const masked = JSON.stringify(mask(parsed));
    // Unchanged JSON keeps its own spelling (spacing, key order).
    return masked === JSON.stringify(parsed) ? text : masked;
  }
  return maskCardNumbers(text);
}

/** `text` with every 13–19 digit run that passes the Luhn check (a card number) replaced by `[masked]`. */
export function maskCardNumbers(text: string): string {
  if (text.length < 13) return text;
  return text.replace(DIGIT_RUN, (run) => (passesLuhn(run) ? MASKED : run));
}

function passesLuhn(run: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = run.length - 1; index >= 0; index--) {
    const code = run.charCodeAt(index) - 48;
    if (code < 0 || code > 9) continue;
    const digit = double ? code * 2 : code;
    sum += digit > 9 ? digit - 9 : digit;
    double = !double;
  }
  return sum % 10 === 0;
}
