/**
 * Card-like names, compared without case or the separators `_` and `-`, as core's capture masks them: `cc_*`,
 * anything naming a card, a CVV or CVC, a PAN or a cryptogram. `cc_mask` is masked already and shown.
 */
const CARD_NAME = /^cc|card|cvv|cvc|cryptogram|^pan$|pan$/;

/** 13 to 19 digits, alone or grouped by single spaces or dashes, not part of a longer run. */
const DIGIT_RUN = /(?<![0-9][ -]?)[0-9](?:[ -]?[0-9]){12,18}(?![ -]?[0-9])/g;

/** `abcd…wxyz (64 chars)`; short or secret-grade values become `****`. */
function maskValue(name: string, value: unknown): unknown {
  if (typeof value !== 'string' && typeof value !== 'number') return value === undefined ? value : '****';
  const text = String(value);
  if (name === 'cctoken' && text.length >= 12)
    return `${text.slice(0, 4)}…${text.slice(-4)} (${text.length} chars)`;
  if (name === 'ccnumber' && text.length >= 12) return sixAndFour(text.replace(/[ -]/g, ''));
  return '****';
}

function sixAndFour(digits: string): string {
  return `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}`;
}

/** `text` with every run of digits that passes the Luhn check (a card number) shown as its first 6 and last 4. */
function maskCardNumbers(text: string): string {
  return text.replace(DIGIT_RUN, (run) => {
    const digits = run.replace(/[ -]/g, '');
    let sum = 0;
    for (let index = 0; index < digits.length; index++) {
      const digit = Number(digits[digits.length - 1 - index]) * (index % 2 === 1 ? 2 : 1);
      sum += digit > 9 ? digit - 9 : digit;
    }
    return sum % 10 === 0 ? sixAndFour(digits) : run;
  });
}

/**
 * A copy of a decoded notification with card tokens and card data masked: card-like names at any depth, whatever
 * their case, and card numbers wherever they appear in a value.
 */
export function maskNotification(value: unknown): unknown {
  if (typeof value === 'string') return maskCardNumbers(value);
  if (typeof value === 'number') {
    const masked = maskCardNumbers(String(value));
    return masked === String(value) ? value : masked;
  }
  if (Array.isArray(value)) return value.map(maskNotification);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const name = key.toLowerCase().replace(/[_-]/g, '');
    out[key] = name !== 'ccmask' && CARD_NAME.test(name) ? maskValue(name, field) : maskNotification(field);
  }
  return out;
}
