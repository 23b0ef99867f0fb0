import { describe, expect, it } from 'vitest';
import { toDuration, toMilliseconds } from './duration.js';

describe('scenario durations', () => {
  it.each([
    ['500ms', 500],
    ['90s', 90_000],
    ['10m', 600_000],
    [' 2 h ', 7_200_000],
    ['1d', 86_400_000],
    ['1w', 604_800_000],
    [1_500, 1_500],
    ['1mo', { months: 1 }],
    ['2y', { years: 2 }],
  ])('reads %j', (text, duration) => {
    expect(toDuration(text)).toEqual(duration);
  });

  it.each([['-1m'], ['1.5h'], ['10 minutes'], [''], [-1], [1.5]])('refuses %j', (text) => {
    expect(toDuration(text)).toBeUndefined();
  });

  it('takes no calendar unit for a delay', () => {
    expect([toMilliseconds('5m'), toMilliseconds('1mo'), toMilliseconds('x')]).toEqual([
      300_000,
      undefined,
      undefined,
    ]);
  });
});
