import { describe, expect, it } from 'vitest';
import type { InitRecurring } from './requests.js';
import { resolveInitRecurring, validateInitRecurring } from './validate-recurring.js';

const init = { interval_unit: 'month', interval_count: 1 };
type Pair = { field: string; code: string };
const codes = (value: unknown): Pair[] =>
  validateInitRecurring(value).violations.map(({ field, code }) => ({ field, code }));

describe('validateInitRecurring', () => {
  it('accepts the smallest subscription, and one with every field', () => {
    expect(validateInitRecurring(init)).toEqual({ valid: true, violations: [] });
    const full = {
      interval_unit: 'week',
      interval_count: 2,
      retry_attempts: 7,
      retry_interval_hours: 72,
      start_date: '2026-12-01',
      expiry_date: '2027-12-01',
      time: '23:59:59',
      notification_url: 'https://shop.example/recurring',
      amount: 99.99,
    };
    expect(codes(full)).toEqual([]);
  });

  it.each(['day', 'week', 'month', 'quarter', 'year'])('accepts interval_unit %s', (unit) => {
    expect(codes({ ...init, interval_unit: unit })).toEqual([]);
  });

  it.each([null, 'monthly', [init]])('refuses %j: not an object', (value) => {
    expect(codes(value)).toEqual([{ field: '', code: 'type' }]);
  });

  it('requires interval_unit and interval_count, reporting both', () => {
    expect(codes({})).toEqual([
      { field: 'interval_unit', code: 'required' },
      { field: 'interval_count', code: 'required' },
    ]);
  });

  describe.each<[string, Record<string, unknown>, string, string]>([
    ['interval_unit hour', { interval_unit: 'hour' }, 'interval_unit', 'enum'],
    ['interval_unit a number', { interval_unit: 1 }, 'interval_unit', 'type'],
    ['interval_count 0', { interval_count: 0 }, 'interval_count', 'min'],
    ['interval_count 31', { interval_count: 31 }, 'interval_count', 'max'],
    ['interval_count 1.5', { interval_count: 1.5 }, 'interval_count', 'integer'],
    ['interval_count "2"', { interval_count: '2' }, 'interval_count', 'type'],
    ['retry_attempts -1', { retry_attempts: -1 }, 'retry_attempts', 'min'],
    ['retry_attempts 8', { retry_attempts: 8 }, 'retry_attempts', 'max'],
    ['retry_interval_hours 0', { retry_interval_hours: 0 }, 'retry_interval_hours', 'min'],
    ['retry_interval_hours 73', { retry_interval_hours: 73 }, 'retry_interval_hours', 'max'],
    [
      'retry_interval_hours 24 for day',
      { interval_unit: 'day', retry_interval_hours: 24 },
      'retry_interval_hours',
      'max',
    ],
    ['start_date not real', { start_date: '2026-13-01' }, 'start_date', 'format.date'],
    ['start_date with a time', { start_date: '2026-12-01T00:00:00' }, 'start_date', 'format.date'],
    ['expiry_date Feb 29 of a common year', { expiry_date: '2027-02-29' }, 'expiry_date', 'format.date'],
    [
      'expiry_date before start_date',
      { start_date: '2026-12-02', expiry_date: '2026-12-01' },
      'expiry_date',
      'date.order',
    ],
    ['time 24:00:00', { time: '24:00:00' }, 'time', 'format.time'],
    ['time without seconds', { time: '10:30' }, 'time', 'format.time'],
    ['notification_url not a URL', { notification_url: 'shop/recurring' }, 'notification_url', 'format.url'],
    ['amount with 3 decimals', { amount: 9.999 }, 'amount', 'amount.invalid'],
    ['amount negative', { amount: -1 }, 'amount', 'amount.invalid'],
  ])('%s', (_name, change, field, code) => {
    it('is refused with exactly that violation', () =>
      expect(codes({ ...init, ...change })).toEqual([{ field, code }]));
  });

  describe.each<[string, Record<string, unknown>]>([
    ['interval_count 30', { interval_count: 30 }],
    ['retry_attempts 0', { retry_attempts: 0 }],
    ['retry_interval_hours 23 for day', { interval_unit: 'day', retry_interval_hours: 23 }],
    ['retry_interval_hours 72 for quarter', { interval_unit: 'quarter', retry_interval_hours: 72 }],
    ['expiry_date equal to start_date', { start_date: '2026-12-01', expiry_date: '2026-12-01' }],
    ['time 00:00:00', { time: '00:00:00' }],
  ])('accepts %s', (_name, change) => {
    it('with no violation', () => expect(codes({ ...init, ...change })).toEqual([]));
  });
});

describe('resolveInitRecurring', () => {
  it.each<[InitRecurring, number, number]>([
    [{ interval_unit: 'day', interval_count: 1 }, 3, 2],
    [{ interval_unit: 'week', interval_count: 1 }, 3, 24],
    [{ interval_unit: 'month', interval_count: 1 }, 3, 24],
    [{ interval_unit: 'year', interval_count: 1, retry_attempts: 0, retry_interval_hours: 72 }, 0, 72],
  ])('applies the defaults to %j', (input, attempts, hours) => {
    expect(resolveInitRecurring(input)).toEqual({
      ...input,
      retry_attempts: attempts,
      retry_interval_hours: hours,
    });
  });

  it('leaves time, notification_url and amount absent: the payment supplies them', () => {
    const resolved = resolveInitRecurring({ interval_unit: 'month', interval_count: 3 });
    expect(Object.keys(resolved).sort()).toEqual([
      'interval_count',
      'interval_unit',
      'retry_attempts',
      'retry_interval_hours',
    ]);
  });
});
