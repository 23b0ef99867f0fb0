import { describe, expect, it } from 'vitest';
import { parseTimestamp } from './time.js';

describe('parseTimestamp', () => {
  it('reads a zone-less timestamp as UTC', () => {
    expect(parseTimestamp('2026-11-22T10:15:00')?.toISOString()).toBe('2026-11-22T10:15:00.000Z');
    expect(parseTimestamp('2026-11-22T10:15:00.120')?.toISOString()).toBe('2026-11-22T10:15:00.120Z');
  });

  it('respects a zone when one is given', () => {
    expect(parseTimestamp('2026-11-22T10:15:00+02:00')?.toISOString()).toBe('2026-11-22T08:15:00.000Z');
  });

  it('returns undefined for nothing or nonsense', () => {
    expect(parseTimestamp(undefined)).toBeUndefined();
    expect(parseTimestamp('yesterday')).toBeUndefined();
  });
});
