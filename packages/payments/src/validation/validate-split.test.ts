import { describe, expect, it } from 'vitest';
import type { SplitPurchaseRequest } from './requests.js';
import { validateSplitPurchaseRequest } from './validate-split.js';
import type { ValidationOptions } from './violations.js';

const now = new Date('2026-11-22T12:00:00Z');
const POS = 'c2b6d5ae-3c8f-4e2b-9a7d-1f0e5b4c3a21';
const SUB_A = '0b9f3c1e-6a2d-4f7b-8c5e-3d1a9b7c5e20';
const SUB_B = '5e7d9a1b-2c4f-4a6e-9b8d-7f1c3e5a9b42';
/** Spec 4.2: every field a hosted split purchase requires, each with a valid value (`hosted` is exactly these). */
const HOSTED_REQUIRED: [field: string, value: unknown][] = [
  ['pos_id', POS],
  ['mode', 'hosted'],
  ['method', 'purchase'],
  ['amount', 100.3],
  ['currency', 'UAH'],
  ['description', 'Marketplace order'],
  ['order_id', 'm-1'],
  ['order_3ds_bypass', 'supported'],
  ['customer_email', 'olena@example.com'],
  ['customer_phone', '+380501234567'],
  [
    'split',
    [
      { amount: 60.1, sub_merchant_id: SUB_A },
      { amount: 40.2, sub_merchant_id: SUB_B, products: [{ name: 'Book' }] },
    ],
  ],
];
const hosted: Record<string, unknown> = Object.fromEntries(HOSTED_REQUIRED);
const direct: Record<string, unknown> = {
  ...hosted,
  mode: 'direct',
  customer_fname: 'Olena',
  customer_lname: 'Shevchenko',
  customer_ip: '203.0.113.7',
  cc_token: 'tok_abc',
};
type Pair = { field: string; code: string };

const codes = (request: unknown, options: ValidationOptions = {}): Pair[] =>
  validateSplitPurchaseRequest(request, { now, ...options }).violations.map(({ field, code }) => ({
    field,
    code,
  }));
const without = (request: Record<string, unknown>, key: string) =>
  Object.fromEntries(Object.entries(request).filter(([k]) => k !== key));

describe('validateSplitPurchaseRequest', () => {
  it('accepts a whole hosted and a whole direct split purchase', () => {
    expect(validateSplitPurchaseRequest(hosted, { now })).toEqual({ valid: true, violations: [] });
    expect(validateSplitPurchaseRequest(direct, { now })).toEqual({ valid: true, violations: [] });
  });

  it('accepts a hosted request written against the SplitPurchaseRequest type with its required fields only', () => {
    const payment = { pos_id: POS, mode: 'hosted', method: 'purchase', amount: 5, currency: 'XTS' } as const;
    const order = { description: 'd', order_id: 'o', order_3ds_bypass: 'never' } as const;
    const customer = { customer_email: 'a@b.co', customer_phone: '1' };
    const typed: SplitPurchaseRequest = {
      ...payment,
      ...order,
      ...customer,
      split: [{ amount: 5, sub_merchant_id: SUB_A }],
    };
    expect(codes(typed)).toEqual([]);
  });

  it('refuses a body that is not an object', () => {
    expect(codes([hosted])).toEqual([{ field: '', code: 'type' }]);
  });

  it.each(HOSTED_REQUIRED)('hosted requires %s', (field) => {
    expect(codes(without(hosted, field))).toEqual([{ field, code: 'required' }]);
  });

  it.each(['customer_fname', 'customer_lname', 'customer_ip'])(
    'direct also requires %s; hosted does not',
    (field) => {
      expect(codes(without(direct, field))).toEqual([{ field, code: 'required' }]);
      expect(hosted[field]).toBeUndefined();
      expect(codes(hosted)).toEqual([]);
    },
  );

  it('direct needs the card or a token, as a payment does', () => {
    expect(codes(without(direct, 'cc_token'))).toEqual([
      { field: 'cc_number', code: 'required' },
      { field: 'exp_month', code: 'required' },
      { field: 'exp_year', code: 'required' },
      { field: 'card_cvv', code: 'required' },
    ]);
  });

  it.each(['auth', 'capture'])('refuses method %s: split supports purchase only', (method) => {
    expect(codes({ ...hosted, method })).toEqual([{ field: 'method', code: 'enum' }]);
  });

  describe.each<[string, unknown, Pair[]]>([
    ['an empty split', [], [{ field: 'split', code: 'split.empty' }]],
    ['split an object', { amount: 1 }, [{ field: 'split', code: 'type' }]],
    [
      'an item not an object',
      [{ amount: 100.3, sub_merchant_id: SUB_A }, 7],
      [{ field: 'split[1]', code: 'type' }],
    ],
    [
      'an item without amount or sub_merchant_id',
      [{ amount: 100.3, sub_merchant_id: SUB_A }, {}],
      [
        { field: 'split[1].amount', code: 'required' },
        { field: 'split[1].sub_merchant_id', code: 'required' },
      ],
    ],
    [
      'an item amount with 3 decimals',
      [
        { amount: 100.295, sub_merchant_id: SUB_A },
        { amount: 0.005, sub_merchant_id: SUB_B },
      ],
      [
        { field: 'split[0].amount', code: 'amount.invalid' },
        { field: 'split[1].amount', code: 'amount.invalid' },
      ],
    ],
    [
      'an item amount zero',
      [
        { amount: 100.3, sub_merchant_id: SUB_A },
        { amount: 0, sub_merchant_id: SUB_B },
      ],
      [{ field: 'split[1].amount', code: 'amount.invalid' }],
    ],
    [
      'an item amount a string',
      [{ amount: '100.30', sub_merchant_id: SUB_A }],
      [{ field: 'split[0].amount', code: 'type' }],
    ],
    [
      'a sub_merchant_id not a UUID',
      [{ amount: 100.3, sub_merchant_id: 'shop-a' }],
      [{ field: 'split[0].sub_merchant_id', code: 'format.uuid' }],
    ],
    [
      'products not an array',
      [{ amount: 100.3, sub_merchant_id: SUB_A, products: 'book' }],
      [{ field: 'split[0].products', code: 'type' }],
    ],
    [
      'a product not an object',
      [{ amount: 100.3, sub_merchant_id: SUB_A, products: [{}, 3] }],
      [{ field: 'split[0].products[1]', code: 'type' }],
    ],
  ])('%s', (_name, split, expected) => {
    it('is refused with exactly those violations', () =>
      expect(codes({ ...hosted, split })).toEqual(expected));
  });

  describe('the sum of the split against amount', () => {
    const split = (a: number, b: number) => [
      { amount: a, sub_merchant_id: SUB_A },
      { amount: b, sub_merchant_id: SUB_B },
    ];

    it('equal (the default) compares in cents exactly: 0.1 + 0.2 is 0.3', () => {
      expect(codes({ ...hosted, amount: 0.3, split: split(0.1, 0.2) })).toEqual([]);
      expect(codes({ ...hosted, amount: 100.3, split: split(60.1, 40.1) })).toEqual([
        { field: 'split', code: 'split.sum_mismatch' },
      ]);
      expect(codes({ ...hosted, amount: 100.3, split: split(60.1, 40.3) })).toEqual([
        { field: 'split', code: 'split.sum_mismatch' },
      ]);
    });

    it('at_most refuses only a split adding up to more than amount', () => {
      expect(codes({ ...hosted, split: split(60.1, 40.1) }, { splitSum: 'at_most' })).toEqual([]);
      expect(codes({ ...hosted, split: split(60.1, 40.3) }, { splitSum: 'at_most' })).toEqual([
        { field: 'split', code: 'split.sum_mismatch' },
      ]);
    });

    it('ignore does not compare', () => {
      expect(codes({ ...hosted, split: split(1, 2) }, { splitSum: 'ignore' })).toEqual([]);
    });

    it('is not compared while an amount is itself invalid', () => {
      expect(codes({ ...hosted, split: split(1.001, 2) })).toEqual([
        { field: 'split[0].amount', code: 'amount.invalid' },
      ]);
    });
  });

  it('applies the sector rules to split purchases too', () => {
    expect(codes(hosted, { sector: 'igaming' })).toEqual([
      { field: 'customer_fname', code: 'required' },
      { field: 'customer_lname', code: 'required' },
    ]);
  });
});
