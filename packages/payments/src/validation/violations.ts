/**
 * One broken rule. `field` is the path of the value (`amount`, `split[1].amount`,
 * `init_recurring.interval_count`, `card_cvv`; `''` for the request itself); `code` is stable, match on it;
 * `message` is for people and never repeats the value (it may be a card number).
 *
 * Codes: `required`, `required_one_of`, `type`, `enum`, `max_length`, `integer`, `min`, `max`,
 * `amount.invalid`, `format.uuid|currency|country|date|time|url|email|ip|mcc|token`, `date.order`,
 * `card.format|length|luhn|expiry_month|expiry_year|expired|conflict`, `cvv.format|conflict`, `not_allowed`,
 * `split.empty`, `split.sum_mismatch`, `recurring.method`.
 *
 * @example
 * const byField = Object.fromEntries(result.violations.map((v: Violation) => [v.field, v.message]));
 */
export interface Violation {
  field: string;
  code: string;
  message: string;
}

/**
 * Every violation found, not just the first; `valid` is true exactly when the list is empty.
 *
 * @example
 * const result: ValidationResult = validatePaymentRequest(body);
 * if (!result.valid) return res.status(400).json({ violations: result.violations });
 */
export interface ValidationResult {
  valid: boolean;
  violations: Violation[];
}

/**
 * How a split's item amounts must relate to the top-level amount (not shown by the spec).
 *
 * @example
 * const rule: SplitSumRule = 'at_most'; // the remainder stays with the main merchant
 */
export type SplitSumRule = 'equal' | 'at_most' | 'ignore';

/**
 * What the rules depend on besides the request.
 *
 * @example
 * validatePaymentRequest(body, { sector: 'microfinance', now: new Date('2026-11-22T00:00:00Z') });
 */
export interface ValidationOptions {
  /** The merchant's sector: `microfinance` and `igaming` add required customer fields (spec 4.1). */
  sector?: 'microfinance' | 'igaming' | (string & {});
  /** The clock card expiry is checked against (UTC months). @default new Date() */
  now?: Date;
  /**
   * Split payments: `equal` refuses items that do not add up to `amount`, `at_most` refuses only items that
   * exceed it, `ignore` does not compare.
   * @default 'equal'
   */
  splitSum?: SplitSumRule;
}

export class Violations {
  readonly list: Violation[] = [];

  add(field: string, code: string, message: string): void {
    this.list.push({ field, code, message });
  }

  result(): ValidationResult {
    return { valid: this.list.length === 0, violations: this.list };
  }
}

/** Absent as JSON sees it: a missing key or `null`. */
export function isAbsent(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function path(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}
