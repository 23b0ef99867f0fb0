import type { Duration } from '../fake/calendar.js';
import type { ScenarioDuration } from './types.js';

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const PATTERN = /^(\d+)\s*(ms|s|m|h|d|w|mo|y)$/;

/**
 * A scenario duration as the fake clock takes it: ms, or calendar months and years; `undefined` when it is not one
 * (a negative or fractional number, an unknown unit).
 */
export function toDuration(value: ScenarioDuration): Duration | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  const match = PATTERN.exec(value.trim());
  if (!match) return undefined;
  const count = Number(match[1]);
  const unit = match[2]!;
  if (unit === 'mo') return { months: count };
  if (unit === 'y') return { years: count };
  return count * UNIT_MS[unit]!;
}

/** A duration in ms, for delays (which take no calendar units); `undefined` when it is not one. */
export function toMilliseconds(value: ScenarioDuration): number | undefined {
  const duration = toDuration(value);
  return typeof duration === 'number' ? duration : undefined;
}
