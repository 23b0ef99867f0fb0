const EXPONENTS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** A loop: `/0+$/` retries from every zero of a run, quadratic on `0…01`. */
export function withoutTrailingZeros(digits: string): string {
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 48) end--;
  return digits.slice(0, end);
}

/** Decimal places of an ISO 4217 currency (2 for any code not listed as different). */
export function currencyExponent(currency: string): number {
  return EXPONENTS[currency.toUpperCase()] ?? 2;
}

/**
 * Converts an amount in major units (as the service sends it) to integer minor units, from its decimal text
 * rather than by float multiplication, so `19.99` is `1999`, never `1998.9999999999998`.
 *
 * @throws {RangeError} when the amount has more decimals than the currency allows, or is not a finite decimal.
 * @example
 * toMinorUnits(19.99, 'UAH'); // 1999
 * toMinorUnits('1500', 'JPY'); // 1500
 */
export function toMinorUnits(amount: number | string, currency: string): number {
  const text = typeof amount === 'number' ? decimalText(amount) : amount.trim();
  const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) {
    throw new RangeError(`[@payhook/core] amount ${JSON.stringify(String(amount))} is not a decimal number.`);
  }
  const exponent = currencyExponent(currency);
  const fraction = withoutTrailingZeros(match[3] ?? '');
  if (fraction.length > exponent) {
    throw new RangeError(
      `[@payhook/core] amount ${text} has more than ${exponent} decimals for ${currency}.`,
    );
  }
  const minor = Number((match[2] || '0') + fraction.padEnd(exponent, '0'));
  if (!Number.isSafeInteger(minor)) throw new RangeError(`[@payhook/core] amount ${text} is too large.`);
  return match[1] === '-' ? -minor : minor;
}

function decimalText(amount: number): string {
  if (!Number.isFinite(amount)) return 'NaN';
  const text = String(amount);
  // String() switches to exponent notation below 1e-6 and from 1e21; toFixed(20) is exact enough for both.
  return text.includes('e') ? amount.toFixed(20).replace(/\.?0+$/, '') : text;
}
