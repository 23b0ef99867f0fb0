import { checkAmount, checkInteger, checkString } from './checks.js';
import { isHttpUrl, isIsoDate, isIsoTime } from './formats.js';
import type { InitRecurring, ResolvedInitRecurring } from './requests.js';
import { isAbsent, isPlainObject, path, type ValidationResult, Violations } from './violations.js';

const INTERVAL_UNITS = ['day', 'week', 'month', 'quarter', 'year'] as const;

export function checkInitRecurring(v: Violations, init: unknown, prefix: string): void {
  if (!isPlainObject(init)) {
    v.add(prefix, 'type', `${prefix || 'init_recurring'} must be an object.`);
    return;
  }
  const unit = checkString(v, init, 'interval_unit', prefix, { required: true, oneOf: INTERVAL_UNITS });
  checkInteger(v, init.interval_count, path(prefix, 'interval_count'), { required: true, min: 1, max: 30 });
  checkInteger(v, init.retry_attempts, path(prefix, 'retry_attempts'), { min: 0, max: 7 });
  // An unknown unit is reported above; the hours are then held to the looser bound of the other units.
  checkInteger(v, init.retry_interval_hours, path(prefix, 'retry_interval_hours'), {
    min: 1,
    max: unit === 'day' ? 23 : 72,
  });
  const date = [isIsoDate, 'format.date', 'a real date written YYYY-MM-DD'] as const;
  const start = checkString(v, init, 'start_date', prefix, { format: date });
  const expiry = checkString(v, init, 'expiry_date', prefix, { format: date });
  // Same-width YYYY-MM-DD strings compare in calendar order.
  if (
    start !== undefined &&
    expiry !== undefined &&
    isIsoDate(start) &&
    isIsoDate(expiry) &&
    expiry < start
  ) {
    const field = path(prefix, 'expiry_date');
    v.add(field, 'date.order', `${field} must not be before ${path(prefix, 'start_date')}.`);
  }
  checkString(v, init, 'time', prefix, { format: [isIsoTime, 'format.time', 'a UTC time written HH:MM:SS'] });
  checkString(v, init, 'notification_url', prefix, {
    format: [isHttpUrl, 'format.url', 'an absolute http(s) URL'],
  });
  checkAmount(v, init.amount, path(prefix, 'amount'), false);
}

/**
 * Checks an `init_recurring` object (spec 4.5): `interval_unit` one of day, week, month, quarter, year;
 * `interval_count` an integer 1-30; `retry_attempts` 0-7; `retry_interval_hours` 1-23 for `day`, 1-72
 * otherwise; `start_date` and `expiry_date` real `YYYY-MM-DD` dates, expiry not before start; `time`
 * `HH:MM:SS`; `notification_url` an http(s) URL; `amount` positive with at most 2 decimals. Field paths are
 * relative to the object (`interval_count`); `validatePaymentRequest` prefixes them with `init_recurring.`.
 *
 * @example
 * validateInitRecurring({ interval_unit: 'month', interval_count: 1 }); // { valid: true, violations: [] }
 */
export function validateInitRecurring(init: unknown): ValidationResult {
  const v = new Violations();
  checkInitRecurring(v, init, '');
  return v.result();
}

/**
 * Applies the spec's defaults to a valid `init_recurring`: `retry_attempts` 3, `retry_interval_hours` 2 when
 * the unit is `day` and 24 otherwise. `time`, `notification_url` and `amount` stay absent when absent: they
 * default to the creation time, the initial payment's `server_url` and its amount, which only the payment knows.
 *
 * @example
 * resolveInitRecurring({ interval_unit: 'day', interval_count: 7 });
 * // { interval_unit: 'day', interval_count: 7, retry_attempts: 3, retry_interval_hours: 2 }
 */
export function resolveInitRecurring(init: InitRecurring): ResolvedInitRecurring {
  return {
    ...init,
    retry_attempts: isAbsent(init.retry_attempts) ? 3 : init.retry_attempts,
    retry_interval_hours: isAbsent(init.retry_interval_hours)
      ? init.interval_unit === 'day'
        ? 2
        : 24
      : init.retry_interval_hours,
  };
}
