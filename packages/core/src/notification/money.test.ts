import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toMinorUnits, withoutTrailingZeros } from './money.js';

describe('toMinorUnits', () => {
  it.each([
    [19.99, 'UAH', 1999],
    [0.3, 'USD', 30],
    [1.005, 'BHD', 1005],
    ['10.50', 'UAH', 1050],
    [150, 'UAH', 15000],
    [1500, 'JPY', 1500],
    ['1500.000', 'JPY', 1500],
    [0.07, 'EUR', 7],
    [-12.3, 'XTS', -1230],
  ] as const)('%s %s is %i minor units', (amount, currency, minor) => {
    expect(toMinorUnits(amount, currency)).toBe(minor);
  });

  it.each([
    [10.005, 'UAH'],
    [1.5, 'JPY'],
    ['ten', 'UAH'],
    ['', 'UAH'],
    [Number.NaN, 'UAH'],
    [0.1 + 0.2, 'UAH'],
  ] as const)('refuses %s %s', (amount, currency) => {
    expect(() => toMinorUnits(amount, currency)).toThrow(RangeError);
  });

  it('never has float error for any amount with two decimals (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000_00 }), (cents) => {
        expect(toMinorUnits(cents / 100, 'UAH')).toBe(cents);
      }),
    );
  });
});

describe('withoutTrailingZeros', () => {
  it.each([
    ['', ''],
    ['0', ''],
    ['10', '1'],
    ['1000', '1'],
    ['0001', '0001'],
    ['0'.repeat(10_000) + '1', '0'.repeat(10_000) + '1'],
    ['5' + '0'.repeat(10_000), '5'],
  ])('trims %s', (digits, trimmed) => {
    expect(withoutTrailingZeros(digits)).toBe(trimmed);
  });
});
