import { isMissing } from '@payhook/core/adapter';
import { type ValidationResult, Violations } from './violations.js';

/**
 * Card fields as a direct payment carries them (spec 4.1); `cc_cvv` is the samples' spelling of `card_cvv`.
 *
 * @example
 * const card: CardFields = { cc_number: form.number, exp_month: form.month, exp_year: form.year, card_cvv: form.cvv };
 */
export interface CardFields {
  cc_number?: unknown;
  exp_month?: unknown;
  exp_year?: unknown;
  card_cvv?: unknown;
  cc_cvv?: unknown;
}

/**
 * The Luhn (mod 10) check the spec asks the merchant's page to run on a card number. Only ASCII digits are
 * accepted: any other character, and the empty string, fail.
 *
 * @example
 * luhnCheck('4111111111111111'); // true
 * luhnCheck('4111111111111112'); // false
 */
export function luhnCheck(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

function readInteger(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** Numbers go as JSON numbers, as `amount` does: a string is a `type` violation (one rule for the request). */
function isNumberSent(v: Violations, value: unknown, field: string): boolean {
  if (typeof value === 'number') return true;
  v.add(field, 'type', `${field} must be a JSON number: send 12, not "12".`);
  return false;
}

function checkNumber(card: CardFields, v: Violations): void {
  const number = card.cc_number;
  if (isMissing(number)) {
    v.add('cc_number', 'required', 'cc_number is required.');
    return;
  }
  if (typeof number !== 'string') {
    v.add('cc_number', 'type', 'cc_number must be a string of digits.');
    return;
  }
  if (!/^\d+$/.test(number)) {
    v.add('cc_number', 'card.format', 'cc_number must hold digits only: strip spaces and dashes.');
    return;
  }
  if (number.length < 12 || number.length > 19) {
    v.add('cc_number', 'card.length', 'cc_number must have 12 to 19 digits.');
  }
  if (!luhnCheck(number)) v.add('cc_number', 'card.luhn', 'cc_number fails the Luhn check.');
}

interface ExpiryRule {
  field: 'exp_month' | 'exp_year';
  fits: (value: number) => boolean;
  code: string;
  message: string;
}

const MONTH: ExpiryRule = {
  field: 'exp_month',
  fits: (month) => month >= 1 && month <= 12,
  code: 'card.expiry_month',
  message: 'exp_month must be a month number from 1 to 12.',
};

const YEAR: ExpiryRule = {
  field: 'exp_year',
  // A number loses a leading zero (`05`), so 0-99 reads as two digits.
  fits: (year) => year < 100 || (year >= 1000 && year <= 9999),
  code: 'card.expiry_year',
  message: 'exp_year must be a year of 2 or 4 digits.',
};

function readExpiry(card: CardFields, v: Violations, rule: ExpiryRule): number | undefined {
  const value = card[rule.field];
  if (isMissing(value)) {
    v.add(rule.field, 'required', `${rule.field} is required.`);
    return undefined;
  }
  if (!isNumberSent(v, value, rule.field)) return undefined;
  const integer = readInteger(value);
  if (integer !== undefined && rule.fits(integer)) return integer;
  v.add(rule.field, rule.code, rule.message);
  return undefined;
}

function checkCvv(card: CardFields, v: Violations): void {
  const present = (['card_cvv', 'cc_cvv'] as const).filter((key) => !isMissing(card[key]));
  if (present.length === 0) {
    v.add('card_cvv', 'required', 'card_cvv (or cc_cvv) is required.');
    return;
  }
  let wellFormed = true;
  for (const key of present) {
    const cvv = card[key];
    if (typeof cvv !== 'string' || !/^\d{3,4}$/.test(cvv)) {
      wellFormed = false;
      v.add(key, 'cvv.format', `${key} must be a string of 3 or 4 digits, nothing else.`);
    }
  }
  if (present.length === 2 && wellFormed && card.card_cvv !== card.cc_cvv) {
    v.add('cc_cvv', 'cvv.conflict', 'card_cvv and cc_cvv differ: send one of them.');
  }
}

/**
 * Checks card data as the spec requires of a merchant's own page (part 1): the number has 12 to 19 digits, no
 * other characters, and passes Luhn; `exp_month` is 1-12 and `exp_year` 2 or 4 digits (`28` is 2028), both JSON
 * numbers (a string is `type`, as for `amount`); the card has not expired (it is valid through its expiry month,
 * UTC); the CVV is a string of 3 or 4 digits, under `card_cvv` or the samples' `cc_cvv`. Every violation is reported.
 *
 * @example
 * const { valid, violations } = validateCard(
 *   { cc_number: '4111111111111111', exp_month: 12, exp_year: 2030, card_cvv: '123' },
 *   { now: new Date() },
 * );
 */
export function validateCard(card: CardFields, options: { now?: Date } = {}): ValidationResult {
  const v = new Violations();
  checkNumber(card, v);
  const month = readExpiry(card, v, MONTH);
  const sentYear = readExpiry(card, v, YEAR);
  if (month !== undefined && sentYear !== undefined) {
    const year = sentYear < 100 ? 2000 + sentYear : sentYear;
    const now = options.now ?? new Date();
    if (year * 12 + month - 1 < now.getUTCFullYear() * 12 + now.getUTCMonth()) {
      v.add('exp_year', 'card.expired', 'the card expired: exp_month/exp_year is before the current month.');
    }
  }
  checkCvv(card, v);
  return v.result();
}
