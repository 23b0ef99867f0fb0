import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CardFields, luhnCheck, validateCard } from './card.js';

const now = new Date('2026-11-22T12:00:00Z');
const card = { cc_number: '4111111111111111', exp_month: 12, exp_year: 2030, card_cvv: '123' };
const codes = (input: CardFields, at = now) =>
  validateCard(input, { now: at }).violations.map(({ field, code }) => ({ field, code }));

/** Appends the Luhn check digit to a body of digits. */
function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (luhnCheck(body + d)) return body + d;
  throw new Error('unreachable: one check digit always fits');
}

describe('luhnCheck', () => {
  it.each(['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '0'])(
    'accepts %s',
    (digits) => expect(luhnCheck(digits)).toBe(true),
  );
  it.each(['4111111111111112', '1234567812345678', '', '4111 1111 1111 1111', '4111-1111-1111-1111', '٤١١١'])(
    'refuses %j',
    (digits) => expect(luhnCheck(digits)).toBe(false),
  );

  it('accepts every number completed with its check digit, and refuses one changed digit', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^\d{11,18}$/),
        fc.nat(),
        fc.integer({ min: 1, max: 9 }),
        (body, at, delta) => {
          const number = withCheckDigit(body);
          expect(luhnCheck(number)).toBe(true);
          const i = at % number.length;
          const changed = number.slice(0, i) + ((Number(number[i]) + delta) % 10) + number.slice(i + 1);
          expect(luhnCheck(changed)).toBe(false);
        },
      ),
    );
  });
});

describe('validateCard', () => {
  it('accepts a whole, valid card', () => {
    expect(validateCard(card, { now })).toEqual({ valid: true, violations: [] });
  });

  it('accepts a card expiring in the current month (valid through its month, UTC)', () => {
    expect(codes({ ...card, exp_month: 11, exp_year: 2026 })).toEqual([]);
    expect(codes({ ...card, exp_month: 11, exp_year: 2026 }, new Date('2026-11-30T23:59:59Z'))).toEqual([]);
  });

  it('refuses a card that expired last month, reading the clock in UTC', () => {
    expect(codes({ ...card, exp_month: 10, exp_year: 2026 })).toEqual([
      { field: 'exp_year', code: 'card.expired' },
    ]);
    // 2026-12-01T00:30 UTC is still November 30 in New York: UTC decides.
    expect(codes({ ...card, exp_month: 11, exp_year: 2026 }, new Date('2026-12-01T00:30:00Z'))).toEqual([
      { field: 'exp_year', code: 'card.expired' },
    ]);
  });

  describe.each<[string, CardFields, { field: string; code: string }[]]>([
    ['missing number', { ...card, cc_number: undefined }, [{ field: 'cc_number', code: 'required' }]],
    ['empty number', { ...card, cc_number: '' }, [{ field: 'cc_number', code: 'required' }]],
    [
      'number as a JSON number',
      { ...card, cc_number: 4111111111111111 },
      [{ field: 'cc_number', code: 'type' }],
    ],
    [
      'number with spaces',
      { ...card, cc_number: '4111 1111 1111 1111' },
      [{ field: 'cc_number', code: 'card.format' }],
    ],
    [
      'number with dashes',
      { ...card, cc_number: '4111-1111-1111-1111' },
      [{ field: 'cc_number', code: 'card.format' }],
    ],
    [
      'number failing Luhn',
      { ...card, cc_number: '4111111111111112' },
      [{ field: 'cc_number', code: 'card.luhn' }],
    ],
    [
      '11 digits, Luhn-valid',
      { ...card, cc_number: withCheckDigit('4111111111') },
      [{ field: 'cc_number', code: 'card.length' }],
    ],
    [
      '20 digits, Luhn-valid',
      { ...card, cc_number: withCheckDigit('4'.repeat(19)) },
      [{ field: 'cc_number', code: 'card.length' }],
    ],
    [
      '11 digits failing Luhn',
      { ...card, cc_number: '41111111111' },
      [
        { field: 'cc_number', code: 'card.length' },
        { field: 'cc_number', code: 'card.luhn' },
      ],
    ],
    ['missing month', { ...card, exp_month: undefined }, [{ field: 'exp_month', code: 'required' }]],
    ['month 0', { ...card, exp_month: 0 }, [{ field: 'exp_month', code: 'card.expiry_month' }]],
    ['month 13', { ...card, exp_month: 13 }, [{ field: 'exp_month', code: 'card.expiry_month' }]],
    ['month 1.5', { ...card, exp_month: 1.5 }, [{ field: 'exp_month', code: 'card.expiry_month' }]],
    ['month "012"', { ...card, exp_month: '012' }, [{ field: 'exp_month', code: 'type' }]],
    ['month "May"', { ...card, exp_month: 'May' }, [{ field: 'exp_month', code: 'type' }]],
    [
      'month as a digit string, as amount refuses one',
      { ...card, exp_month: '05' },
      [{ field: 'exp_month', code: 'type' }],
    ],
    ['year of 5 digits', { ...card, exp_year: 20300 }, [{ field: 'exp_year', code: 'card.expiry_year' }]],
    ['missing year', { ...card, exp_year: null }, [{ field: 'exp_year', code: 'required' }]],
    ['year of 3 digits', { ...card, exp_year: 203 }, [{ field: 'exp_year', code: 'card.expiry_year' }]],
    ['year "5"', { ...card, exp_year: '5' }, [{ field: 'exp_year', code: 'type' }]],
    ['year as a digit string', { ...card, exp_year: '2030' }, [{ field: 'exp_year', code: 'type' }]],
    ['two-digit year in the past', { ...card, exp_year: 25 }, [{ field: 'exp_year', code: 'card.expired' }]],
    ['missing CVV', { ...card, card_cvv: undefined }, [{ field: 'card_cvv', code: 'required' }]],
    ['empty CVV', { ...card, card_cvv: '' }, [{ field: 'card_cvv', code: 'required' }]],
    ['CVV of 2 digits', { ...card, card_cvv: '12' }, [{ field: 'card_cvv', code: 'cvv.format' }]],
    ['CVV of 5 digits', { ...card, card_cvv: '12345' }, [{ field: 'card_cvv', code: 'cvv.format' }]],
    ['CVV with a letter', { ...card, card_cvv: '12a' }, [{ field: 'card_cvv', code: 'cvv.format' }]],
    ['CVV with a space', { ...card, card_cvv: ' 123' }, [{ field: 'card_cvv', code: 'cvv.format' }]],
    ['CVV of Arabic-Indic digits', { ...card, card_cvv: '١٢٣' }, [{ field: 'card_cvv', code: 'cvv.format' }]],
    ['CVV as a JSON number', { ...card, card_cvv: 123 }, [{ field: 'card_cvv', code: 'cvv.format' }]],
    [
      'cc_cvv malformed',
      { ...card, card_cvv: undefined, cc_cvv: '1x3' },
      [{ field: 'cc_cvv', code: 'cvv.format' }],
    ],
    ['card_cvv and cc_cvv differ', { ...card, cc_cvv: '124' }, [{ field: 'cc_cvv', code: 'cvv.conflict' }]],
  ])('%s', (_name, input, expected) => {
    it('reports exactly the broken rule', () => {
      expect(codes(input)).toEqual(expected);
      expect(validateCard(input, { now }).valid).toBe(false);
    });
  });

  describe.each<[string, CardFields]>([
    ['a 12-digit number', { ...card, cc_number: withCheckDigit('41111111111') }],
    ['a 19-digit number', { ...card, cc_number: withCheckDigit('4'.repeat(18)) }],
    ['a one-digit month', { ...card, exp_month: 5 }],
    ['a two-digit year number', { ...card, exp_year: 30 }],
    ['a 4-digit CVV', { ...card, card_cvv: '1234' }],
    ['the samples spelling cc_cvv', { ...card, card_cvv: undefined, cc_cvv: '123' }],
    ['card_cvv and cc_cvv equal', { ...card, cc_cvv: '123' }],
  ])('accepts %s', (_name, input) => {
    it('with no violation', () => expect(codes(input)).toEqual([]));
  });

  it('reports every violation at once, never repeating a card value in a message', () => {
    const result = validateCard(
      { cc_number: '4111111111111112', exp_month: 13, exp_year: 123, card_cvv: '9' },
      { now },
    );
    expect(result.violations.map(({ field, code }) => ({ field, code }))).toEqual([
      { field: 'cc_number', code: 'card.luhn' },
      { field: 'exp_month', code: 'card.expiry_month' },
      { field: 'exp_year', code: 'card.expiry_year' },
      { field: 'card_cvv', code: 'cvv.format' },
    ]);
    for (const { message } of result.violations) expect(message).not.toMatch(/4111|\b9\b/);
  });

  it('refuses any CVV that is not 3 or 4 ASCII digits', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (cvv) => {
        const ok = /^[0-9]{3,4}$/.test(cvv);
        expect(codes({ ...card, card_cvv: cvv })).toEqual(
          ok ? [] : [{ field: 'card_cvv', code: 'cvv.format' }],
        );
      }),
    );
  });
});
