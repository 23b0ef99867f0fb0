import { describe, expect, it } from 'vitest';
import { addDuration, addInterval, addMonths } from './calendar.js';

const at = (iso: string) => new Date(iso);

describe('month arithmetic of the fake clock and schedules', () => {
  it.each([
    ['2026-01-31T09:00:00Z', 1, '2026-02-28T09:00:00.000Z'],
    ['2028-01-31T09:00:00Z', 1, '2028-02-29T09:00:00.000Z'],
    ['2026-01-31T09:00:00Z', 2, '2026-03-31T09:00:00.000Z'],
    ['2026-03-31T23:59:59Z', 1, '2026-04-30T23:59:59.000Z'],
    ['2026-12-15T00:00:00Z', 1, '2027-01-15T00:00:00.000Z'],
    ['2028-02-29T12:00:00Z', 12, '2029-02-28T12:00:00.000Z'],
    ['2026-05-31T00:00:00Z', -3, '2026-02-28T00:00:00.000Z'],
  ])('%s + %i months = %s (day clamped to the month end)', (from, months, expected) => {
    expect(addMonths(at(from), months).toISOString()).toBe(expected);
  });

  it('counts every charge from the anchor, so the 31st comes back after a short month', () => {
    const anchor = at('2026-01-31T09:00:00Z');
    expect([1, 2, 3].map((n) => addInterval(anchor, 'month', n).toISOString().slice(0, 10))).toEqual([
      '2026-02-28',
      '2026-03-31',
      '2026-04-30',
    ]);
    expect(addInterval(anchor, 'quarter', 1).toISOString()).toBe('2026-04-30T09:00:00.000Z');
    expect(addInterval(anchor, 'year', 1).toISOString()).toBe('2027-01-31T09:00:00.000Z');
    expect(addInterval(anchor, 'week', 2).toISOString()).toBe('2026-02-14T09:00:00.000Z');
    expect(addInterval(anchor, 'day', 30).toISOString()).toBe('2026-03-02T09:00:00.000Z');
  });

  it('refuses a unit the spec does not name with a RangeError, instead of scheduling nothing', () => {
    expect(() => addInterval(at('2026-01-31T09:00:00Z'), 'fortnight', 1)).toThrow(
      new RangeError(
        `[@payhook/testing] interval_unit "fortnight" is not one of the spec's units: the fake cannot schedule it.`,
      ),
    );
  });

  it('adds calendar parts before fixed ones', () => {
    expect(addDuration(at('2026-01-31T00:00:00Z'), { months: 1, days: 1, hours: 2 }).toISOString()).toBe(
      '2026-03-01T02:00:00.000Z',
    );
    expect(addDuration(at('2026-01-01T00:00:00Z'), 1_500).toISOString()).toBe('2026-01-01T00:00:01.500Z');
  });
});
