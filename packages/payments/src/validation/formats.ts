import { withoutTrailingZeros } from '@payhook/core/adapter';

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Integer cents of a valid amount, or `undefined`. Read from the decimal text (a number's shortest round-trip
 * form, or the string as given), so `0.1 + 0.2` (`0.30000000000000004`) is refused instead of rounded.
 */
export function amountCents(value: unknown): number | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
  if (typeof value !== 'number' && typeof value !== 'string') return undefined;
  // A number printed with an exponent is below 1e-6 or from 1e21: too many decimals or too large either way.
  const match = DECIMAL.exec(String(value));
  if (!match) return undefined;
  const fraction = withoutTrailingZeros(match[2] ?? '');
  if (fraction.length > 2) return undefined;
  const cents = Number((match[1] ?? '') + fraction.padEnd(2, '0'));
  return Number.isSafeInteger(cents) && cents > 0 ? cents : undefined;
}

/**
 * True for a positive, finite amount with at most 2 decimal digits (spec 4.2 and 8), decided from its decimal
 * text rather than by float arithmetic. Accepts a number or a plain decimal string (`"10.50"`); trailing zeros
 * do not count as decimals, exponents and signs are refused.
 *
 * @example
 * isValidAmount(10.5); // true
 * isValidAmount(0.1 + 0.2); // false: 0.30000000000000004
 * isValidAmount('19.999'); // false
 */
export function isValidAmount(value: unknown): boolean {
  return amountCents(value) !== undefined;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar date written `YYYY-MM-DD` (no `2026-02-30`). */
export function isIsoDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

export function isIsoTime(text: string): boolean {
  return /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/.test(text);
}

export function isUuid(text: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);
}

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A plausible address: one `@`, no spaces, a dot in the domain. */
export function isEmail(text: string): boolean {
  return /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(text);
}

/**
 * An IPv4 or IPv6 address, as `node:net`'s `isIP` accepts them (dotted decimal without leading zeros; IPv6 with
 * `::`, an IPv4 tail and a `%zone`), written out so validation runs where `node:net` does not exist.
 */
export function isIpAddress(text: string): boolean {
  return isIpv4(text) || isIpv6(text);
}

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;
const ZONE = /^[0-9a-zA-Z.:-]+$/;

function isIpv4(text: string): boolean {
  return IPV4.test(text);
}

function isIpv6(text: string): boolean {
  const percent = text.indexOf('%');
  if (percent !== -1 && !ZONE.test(text.slice(percent + 1))) return false;
  const halves = (percent === -1 ? text : text.slice(0, percent)).split('::');
  if (halves.length > 2) return false;
  let groups = 0;
  for (let h = 0; h < halves.length; h++) {
    if (halves[h] === '') continue;
    const parts = halves[h]!.split(':');
    for (let i = 0; i < parts.length; i++) {
      // An IPv4 tail (two groups' worth) only at the very end.
      const tail = h === halves.length - 1 && i === parts.length - 1 && isIpv4(parts[i]!);
      if (!tail && !HEX_GROUP.test(parts[i]!)) return false;
      groups += tail ? 2 : 1;
    }
  }
  // `::` stands for at least one group of zeros.
  return halves.length === 1 ? groups === 8 : groups <= 7;
}
