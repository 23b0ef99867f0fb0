import type { IntervalUnit } from '@payhook/payments';

const DAY_MS = 86_400_000;

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
}

/**
 * Adds calendar months in UTC, clamping the day to the target month's last day: Jan 31 + 1 month is Feb 28
 * (29 in a leap year), and Feb 29 + 1 year is Feb 28. The time of day is kept.
 */
export function addMonths(date: Date, months: number): Date {
  const total = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const day = Math.min(date.getUTCDate(), daysInMonth(year, month));
  return new Date(
    Date.UTC(
      year,
      month,
      day,
      date.getUTCHours(),
      date.getUTCMinutes(),
      date.getUTCSeconds(),
      date.getUTCMilliseconds(),
    ),
  );
}

/**
 * The date `count` intervals after `anchor`. Every charge is computed from the anchor (never from the previous
 * charge), so a subscription anchored on the 31st charges on the 31st in every month that has one. A unit the
 * spec does not name (core's type keeps it open, its validator refuses it) throws a RangeError.
 */
export function addInterval(anchor: Date, unit: IntervalUnit, count: number): Date {
  switch (unit) {
    case 'day':
      return new Date(anchor.getTime() + count * DAY_MS);
    case 'week':
      return new Date(anchor.getTime() + count * 7 * DAY_MS);
    case 'month':
      return addMonths(anchor, count);
    case 'quarter':
      return addMonths(anchor, count * 3);
    case 'year':
      return addMonths(anchor, count * 12);
    default:
      throw new RangeError(
        `[@payhook/testing] interval_unit ${JSON.stringify(unit)} is not one of the spec's units: the fake cannot schedule it.`,
      );
  }
}

/**
 * A span of time for `advanceBy`: milliseconds, or calendar parts (months and years use `addMonths`).
 *
 * @example
 * await fake.clock.advanceBy({ months: 1, hours: 2 });
 * await fake.clock.advanceBy(60_000);
 */
export type Duration =
  | number
  | {
      years?: number;
      months?: number;
      weeks?: number;
      days?: number;
      hours?: number;
      minutes?: number;
      seconds?: number;
    };

/** `date` moved forward by `duration`: calendar parts first (years, months), then fixed ones. */
export function addDuration(date: Date, duration: Duration): Date {
  if (typeof duration === 'number') return new Date(date.getTime() + duration);
  const months = (duration.years ?? 0) * 12 + (duration.months ?? 0);
  const base = months === 0 ? date : addMonths(date, months);
  const ms =
    ((duration.weeks ?? 0) * 7 + (duration.days ?? 0)) * DAY_MS +
    (duration.hours ?? 0) * 3_600_000 +
    (duration.minutes ?? 0) * 60_000 +
    (duration.seconds ?? 0) * 1_000;
  return new Date(base.getTime() + ms);
}

/** The service's zone-less UTC timestamp: `YYYY-MM-DDTHH:MM:SS`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString().slice(0, 19);
}

/** `YYYY-MM-DD` of a date in UTC. */
export function formatDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** `HH:MM:SS` of a date in UTC. */
export function formatTime(date: Date): string {
  return date.toISOString().slice(11, 19);
}

/** A `YYYY-MM-DD` date at a `HH:MM:SS` UTC time. */
export function atTime(date: string, time: string): Date {
  return new Date(`${date}T${time}Z`);
}
