import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  amountCents,
  isEmail,
  isHttpUrl,
  isIpAddress,
  isIsoDate,
  isIsoTime,
  isUuid,
  isValidAmount,
} from './formats.js';

describe('isValidAmount', () => {
  it.each([0.01, 1, 10.5, 19.99, 30000, 1e9, '10.50', '10.5', '7', '0.10', '1.230'])(
    'accepts %j',
    (value) => {
      expect(isValidAmount(value)).toBe(true);
    },
  );

  it.each([
    0,
    -1,
    -0.01,
    0.001,
    10.005,
    0.1 + 0.2,
    1e-7,
    1e21,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    '',
    '0',
    '-1',
    '+1',
    '1e2',
    ' 1',
    '1.',
    '.5',
    '1,50',
    '10.505',
    null,
    true,
    [1],
  ])('refuses %j', (value) => {
    expect(isValidAmount(value)).toBe(false);
  });

  it('accepts any whole number of cents as a 2-decimal amount, and reads the cents back exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 12 }), (cents) => {
        const amount = Number(`${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`);
        expect(isValidAmount(amount)).toBe(true);
        expect(amountCents(amount)).toBe(cents);
      }),
    );
  });

  it('refuses any amount whose third decimal is not zero', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 10 ** 9 }),
        fc.integer({ min: 0, max: 99 }),
        fc.integer({ min: 1, max: 9 }),
        (units, cents, third) => {
          const text = `${units}.${String(cents).padStart(2, '0')}${third}`;
          expect(isValidAmount(text)).toBe(false);
          expect(isValidAmount(Number(text))).toBe(false);
        },
      ),
    );
  });
});

describe('formats', () => {
  it.each([
    ['2024-02-29', true],
    ['2023-02-29', false],
    ['1900-02-29', false],
    ['2000-02-29', true],
    ['2026-04-31', false],
    ['2026-12-31', true],
    ['0000-01-01', false],
    ['2026-1-01', false],
  ])('isIsoDate(%j) is %s', (text, expected) => expect(isIsoDate(text)).toBe(expected));

  it.each([
    ['00:00:00', true],
    ['23:59:59', true],
    ['24:00:00', false],
    ['12:60:00', false],
    ['9:00:00', false],
  ])('isIsoTime(%j) is %s', (text, expected) => expect(isIsoTime(text)).toBe(expected));

  it.each([
    ['C2B6D5AE-3C8F-4E2B-9A7D-1F0E5B4C3A21', true],
    ['c2b6d5ae3c8f4e2b9a7d1f0e5b4c3a21', false],
    ['c2b6d5ae-3c8f-4e2b-9a7d-1f0e5b4c3a2', false],
  ])('isUuid(%j) is %s', (text, expected) => expect(isUuid(text)).toBe(expected));

  it.each([
    ['https://shop.example/hook', true],
    ['http://127.0.0.1:8443/hook', true],
    ['mailto:joe@example.com', false],
    ['https://', false],
    ['shop.example/hook', false],
  ])('isHttpUrl(%j) is %s', (text, expected) => expect(isHttpUrl(text)).toBe(expected));

  it.each([
    ['joe@example.com', true],
    ['joe@localhost', false],
    ['joe example@example.com', false],
    ['joe@@example.com', false],
  ])('isEmail(%j) is %s', (text, expected) => expect(isEmail(text)).toBe(expected));
});

describe('isIpAddress, written out, against node:net isIP', () => {
  it.each([
    ['1.2.3.4', true],
    ['0.0.0.0', true],
    ['255.255.255.255', true],
    ['01.2.3.4', false],
    ['256.1.1.1', false],
    ['1.2.3', false],
    ['1.2.3.4.5', false],
    ['1.2.3.4%eth0', false],
    ['::', true],
    ['::1', true],
    ['1::', true],
    ['ABCD::ef', true],
    ['1:2:3:4:5:6:7:8', true],
    ['1:2:3:4:5:6:7::', true],
    ['::2:3:4:5:6:7:8', true],
    ['1:2:3:4:5:6:7:8:9', false],
    ['1::2::3', false],
    [':::', false],
    [':1:2:3:4:5:6:7', false],
    ['1:2:3:4:5:6:7:', false],
    ['12345::', false],
    ['::ffff:1.2.3.4', true],
    ['1:2:3:4:5:6:1.2.3.4', true],
    ['1:2:3:4:5::1.2.3.4', true],
    ['1:2:3:4:5:6::1.2.3.4', false],
    ['1.2.3.4::', false],
    ['::1.2.3.4:1', false],
    ['fe80::1%eth0', true],
    ['fe80::1%', false],
    ['fe80::1%eth 0', false],
    ['', false],
    [' ::1', false],
  ])('%j: %s', (text, expected) => {
    expect(isIpAddress(text)).toBe(expected);
    expect(isIP(text) !== 0).toBe(expected);
  });

  it('agrees with node:net on any text of address characters', () => {
    const parts = [...'0123456789abcdefABCDEF:.%-z', '::', '1.2.3.4', '255', '256', '01'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...parts), { maxLength: 30 }), (chars) => {
        const text = chars.join('');
        expect(isIpAddress(text), text).toBe(isIP(text) !== 0);
      }),
      { numRuns: 20_000 },
    );
  });
});
