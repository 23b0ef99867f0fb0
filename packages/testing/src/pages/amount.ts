import { currencyExponent } from '@payhook/core';

/**
 * An amount as a payment page shows it: every minor digit of its currency, then the code (`349.50 UAH`,
 * `1,500 JPY`). A value that is not a finite number is shown as it is.
 */
export function formatAmount(amount: unknown, currency: unknown): string {
  const code = String(currency ?? '');
  if (typeof amount !== 'number' || !Number.isFinite(amount)) return `${String(amount ?? '')} ${code}`;
  const digits = currencyExponent(code);
  const text = new Intl.NumberFormat('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(amount);
  return `${text} ${code}`;
}
