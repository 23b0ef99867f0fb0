import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { purchase, refund } from '../../test/fixtures.js';
import { PayloadError } from '../errors.js';
import { parseNotification } from './parse.js';
import { isRecurring } from './types.js';

function fieldsOf(raw: Record<string, unknown>): readonly string[] {
  try {
    parseNotification(raw);
  } catch (error) {
    if (error instanceof PayloadError && error.code === 'notification.invalid') return error.fields;
    throw error;
  }
  return [];
}

describe('parseNotification', () => {
  it('types a purchase as a primary operation and keeps every field', () => {
    const n = parseNotification(purchase({ extra_field_enabled_by_support: 'x' }));
    expect(n.kind).toBe('primary');
    expect(n.method).toBe('purchase');
    expect(n.amount).toBe(150.25);
    expect((n as unknown as Record<string, unknown>).extra_field_enabled_by_support).toBe('x');
    expect(n.raw.extra_field_enabled_by_support).toBe('x');
  });

  it('keeps raw as sent and out of JSON output', () => {
    const raw = purchase({ status_code: 1000 });
    const n = parseNotification(raw);
    expect(n.raw).toBe(raw);
    expect(n.raw.status_code).toBe(1000);
    expect(JSON.parse(JSON.stringify(n))).not.toHaveProperty('raw');
  });

  it.each(['capture', 'void', 'refund'])('types %s as a secondary operation', (method) => {
    const n = parseNotification(refund({ method }));
    expect(n.kind).toBe('secondary');
    if (n.kind === 'secondary') expect(n.operation_id).toBe('5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9');
  });

  it.each(['purchase', 'auth', 'credit', 'p2p', 'lookup'])('types %s as a primary operation', (method) => {
    expect(parseNotification(purchase({ method })).kind).toBe('primary');
  });

  it('keeps an unknown method as a string, checked like a primary operation', () => {
    const n = parseNotification(purchase({ method: 'payout' }));
    expect(n.kind).toBe('other');
    expect(n.method).toBe('payout');
  });

  it('keeps an unknown status as a string', () => {
    expect(parseNotification(purchase({ status: 'antifraud' })).status).toBe('antifraud');
  });

  it('recognises a recurring charge by its recurring object', () => {
    const n = parseNotification(purchase({ recurring: { id: 'rec-1', status: 'active' } }));
    expect(isRecurring(n)).toBe(true);
    expect(isRecurring(parseNotification(purchase()))).toBe(false);
  });

  it('coerces numbers, booleans and status_code sent as strings or numbers', () => {
    const n = parseNotification(
      purchase({
        amount: '10.50',
        status_code: 1000,
        user_action_required: 'true',
        processed_amount: '9.99',
        fee: { amount: '0.21', currency: 'UAH' },
      }),
    );
    expect(n.amount).toBe(10.5);
    expect(n.status_code).toBe('1000');
    expect(n.kind === 'primary' && n.user_action_required).toBe(true);
    expect(n.processed_amount).toBe(9.99);
    expect(n.fee).toEqual({ amount: 0.21, currency: 'UAH' });
    expect(parseNotification(purchase({ user_action_required: 'false' }))).toMatchObject({
      user_action_required: false,
    });
  });

  it('accepts limit_info as an object, a JSON string, or plain text', () => {
    const limit = { retry_after: '2026-11-23T00:00:00', description: 'daily limit' };
    expect(parseNotification(purchase({ limit_info: limit })).limit_info).toEqual(limit);
    expect(parseNotification(purchase({ limit_info: JSON.stringify(limit) })).limit_info).toEqual(limit);
    expect(parseNotification(purchase({ limit_info: 'daily limit' })).limit_info).toEqual({
      description: 'daily limit',
    });
  });

  it('keeps zone-less timestamps exactly as given', () => {
    expect(parseNotification(purchase()).processed_at).toBe('2026-11-22T10:15:03.120');
  });

  it('names every missing required field of a primary operation', () => {
    const raw = purchase();
    delete raw.payment_id;
    delete raw.created_at;
    raw.currency = '';
    expect(fieldsOf(raw)).toEqual(['payment_id', 'currency', 'created_at']);
  });

  it('requires operation_id on secondary operations', () => {
    const raw = refund();
    delete raw.operation_id;
    expect(fieldsOf(raw)).toEqual(['operation_id']);
  });

  it('refuses an amount that is not a number', () => {
    expect(fieldsOf(purchase({ amount: 'ten' }))).toEqual(['amount']);
    expect(fieldsOf(purchase({ amount: { value: 1 } }))).toEqual(['amount']);
  });

  it('refuses required identifiers that are objects', () => {
    expect(fieldsOf(purchase({ order_id: { $ne: 1 } }))).toEqual(['order_id']);
  });

  it('coerces numeric identifiers to strings', () => {
    expect(parseNotification(purchase({ order_id: 1001 })).order_id).toBe('1001');
  });
});
describe('amount coercion', () => {
  it('coerces exactly the decimal texts the former expression did, with no ambiguity left to backtrack on', () => {
    // The expression before (n ways to split a run of digits between \d+ and \d*: quadratic on `1…1x`).
    const former = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;
    const text = fc.string({
      unit: fc.constantFrom(' ', '+', '-', '.', 'e', 'E', '0', '1', '9', 'x'),
      maxLength: 12,
    });
    fc.assert(
      fc.property(text, (amount) => {
        const coerced = parseNotification({ ...purchase(), processed_amount: amount }).processed_amount;
        expect(coerced).toBe(former.test(amount) ? Number(amount) : amount);
      }),
      { numRuns: 3000 },
    );
  });
});
