import { describe, expect, it } from 'vitest';
import { validateAtServiceLevel } from './service-level.js';

const now = new Date('2026-11-22T12:00:00Z');
const POS = 'c2b6d5ae-3c8f-4e2b-9a7d-1f0e5b4c3a21';
const CARD = { cc_number: '4242424242424242', exp_month: 12, exp_year: 2031, card_cvv: '737' };
const HOSTED = { pos_id: POS, mode: 'hosted', method: 'purchase', amount: 10, order_id: 'o-1' };
const SPLIT = {
  ...HOSTED,
  currency: 'UAH',
  description: 'Marketplace order',
  order_3ds_bypass: 'supported',
  customer_email: 'olena@example.com',
  customer_phone: '+380501234567',
  split: [{ amount: 4, sub_merchant_id: '0b9f3c1e-6a2d-4f7b-8c5e-3d1a9b7c5e20' }],
};
const INIT = { interval_unit: 'month', interval_count: 1 };

const codes = (body: unknown, options: Parameters<typeof validateAtServiceLevel>[1] = {}) =>
  validateAtServiceLevel(body, { now, ...options }).violations.map(({ field, code }) => `${field} ${code}`);

describe('validateAtServiceLevel', () => {
  it("accepts the guest placeholder 'unregistered' (e-mail and customer_id) and numeric-string expiries by default, not when strict", () => {
    const direct = {
      ...HOSTED,
      mode: 'direct',
      currency: 'UAH',
      description: 'Tea',
      customer_ip: '10.0.0.1',
    };
    const guest = { ...direct, ...CARD, customer_id: 'unregistered', customer_email: 'unregistered' };
    expect(codes(guest)).toEqual([]);
    expect(codes(guest, { strict: true })).toEqual(['customer_email format.email']);
    expect(codes({ ...guest, customer_email: 'not an e-mail' })).toEqual(['customer_email format.email']);
    const expiry = { ...direct, ...CARD, exp_month: '07', exp_year: '2030' };
    expect(codes(expiry)).toEqual([]);
    expect(validateAtServiceLevel(expiry, { now }).request).toMatchObject({ exp_month: 7, exp_year: 2030 });
    expect(codes(expiry, { strict: true })).toEqual(['exp_month type', 'exp_year type']);
    expect(codes({ ...expiry, exp_month: '7a' })).toEqual(['exp_month type']);
  });

  it('reads a request as the service could by default: empty fields left out, UAH, card digits, no hosted card', () => {
    const sent = {
      ...HOSTED,
      ...CARD,
      customer_email: '',
      init_recurring: { ...INIT, notification_url: '' },
    };
    const result = validateAtServiceLevel({ ...sent, cc_number: '4242 4242 4242 4242' }, { now });
    expect(result).toEqual({
      valid: true,
      violations: [],
      request: { ...HOSTED, currency: 'UAH', init_recurring: INIT },
    });
    const direct = validateAtServiceLevel({
      ...HOSTED,
      mode: 'direct',
      ...CARD,
      cc_number: '4242 4242 4242 4242',
    });
    expect([direct.valid, (direct.request as { cc_number: string }).cc_number]).toEqual([
      true,
      CARD.cc_number,
    ]);
  });

  it('leaves out the rules the spec does not show, and keeps every rule under strict, over the request as sent', () => {
    const body = { ...HOSTED, method: 'auth', init_recurring: INIT, cc_number: '4242 4242 4242 4242' };
    expect(codes(body)).toEqual([]);
    expect(codes(body, { strict: true })).toEqual([
      'currency required',
      'description required',
      'cc_number not_allowed',
      'method recurring.method',
    ]);
    expect(validateAtServiceLevel(body, { strict: true }).request).toBe(body);
  });

  it("keeps a split purchase's description and currency required, and compares its amounts only when strict", () => {
    const { currency: _, description: __, ...bare } = SPLIT;
    expect(codes(bare, { split: true })).toEqual(['currency required', 'description required']);
    expect(codes(SPLIT, { split: true })).toEqual([]);
    expect(codes(SPLIT, { split: true, strict: true })).toEqual(['split split.sum_mismatch']);
    expect(codes(SPLIT, { split: true, splitSum: 'equal' })).toEqual(['split split.sum_mismatch']);
    expect(codes(SPLIT, { split: true, strict: true, splitSum: 'at_most' })).toEqual([]);
  });

  it('still refuses what the service refuses: 3 decimals, a card failing Luhn, a required field sent empty', () => {
    expect(codes({ ...HOSTED, amount: 10.555 })).toEqual(['amount amount.invalid']);
    expect(codes({ ...HOSTED, mode: 'direct', ...CARD, cc_number: '4242424242424241' })).toEqual([
      'cc_number card.luhn',
    ]);
    expect(codes({ ...HOSTED, order_id: '' })).toEqual(['order_id required']);
    expect(codes('{}')).toEqual([' type']);
  });
});
