import { describe, expect, it } from 'vitest';
import { purchase, refund } from '../../test/fixtures.js';
import { findDrift, type JsonType, sentAsTyped, TYPED } from './drift.js';
import { parseNotification } from './parse.js';

const driftOf = (raw: Record<string, unknown>) => findDrift(parseNotification(raw));

describe('findDrift', () => {
  it('finds nothing in notifications of the fields, statuses, codes and methods payhook types', () => {
    expect(driftOf(purchase())).toBeUndefined();
    expect(driftOf(refund({ status_code: '1004', receipt_url: 'https://pay.example/r/1' }))).toBeUndefined();
    expect(driftOf(purchase({ method: 'auth', status: 'pending', status_code: '2122' }))).toBeUndefined();
    expect(
      driftOf(purchase({ user_action_required: true, limit_info: { description: 'x' } })),
    ).toBeUndefined();
  });

  it('names a new field, status, status code and method, never their values', () => {
    const raw = purchase({ refund_reason: 'customer asked', status: 'rejected', status_code: '3021' });
    expect(driftOf(raw)).toEqual([
      { kind: 'field', name: 'refund_reason' },
      { kind: 'status', name: 'rejected' },
      { kind: 'status_code', name: '3021' },
    ]);
    expect(driftOf(purchase({ method: 'payout' }))).toEqual([{ kind: 'method', name: 'payout' }]);
  });

  it('names a typed field sent as another type: a field turned nullable, an object sent as an array', () => {
    expect(driftOf(purchase({ transaction_id: null, status_description: null, fee: [] }))).toEqual([
      { kind: 'type', name: 'transaction_id', sent: 'null', expected: 'string' },
      { kind: 'type', name: 'status_description', sent: 'null', expected: 'string' },
      { kind: 'type', name: 'fee', sent: 'array', expected: 'object' },
    ]);
  });

  it('names what parseNotification coerced: an amount as text, a status code as a number, a JSON string', () => {
    const raw = purchase({
      amount: '150.25',
      status_code: 1000,
      user_action_required: 'false',
      limit_info: '{"retry_after":"2026-11-23T10:00:00"}',
      fee: { amount: '3.01', currency: 'UAH' },
    });
    expect(driftOf(raw)).toEqual([
      { kind: 'coerced', name: 'amount', sent: 'string', expected: 'number' },
      { kind: 'coerced', name: 'status_code', sent: 'number', expected: 'string' },
      { kind: 'coerced', name: 'user_action_required', sent: 'string', expected: 'boolean' },
      { kind: 'coerced', name: 'limit_info', sent: 'string', expected: 'object' },
      { kind: 'coerced', name: 'fee.amount', sent: 'string', expected: 'number' },
    ]);
  });

  it('tells a value parseNotification could not coerce as a type change', () => {
    expect(driftOf(purchase({ processed_amount: 'n/a', user_action_required: 'yes' }))).toEqual([
      { kind: 'type', name: 'processed_amount', sent: 'string', expected: 'number' },
      { kind: 'type', name: 'user_action_required', sent: 'string', expected: 'boolean' },
    ]);
  });

  it('cuts a name past 64 characters', () => {
    const long = 'x'.repeat(100);
    expect(driftOf(purchase({ [long]: 1 }))).toEqual([{ kind: 'field', name: `${'x'.repeat(64)}…` }]);
  });

  it('reads by name exactly the fields TYPED lists, each counted only as its type', () => {
    const read = new Set<string>();
    const probe = new Proxy({}, { get: (_target, name) => void read.add(String(name)) });
    expect(sentAsTyped(probe)).toBe(true);
    expect([...read].sort()).toEqual([...TYPED.keys()].sort());
    const samples: Record<JsonType, unknown> = {
      string: 'x',
      number: 1,
      boolean: true,
      object: { amount: 1 },
      array: [],
      null: null,
    };
    for (const [field, type] of TYPED) {
      for (const [sent, value] of Object.entries(samples)) {
        expect([field, sent, sentAsTyped({ [field]: value })]).toEqual([field, sent, sent === type]);
      }
    }
    expect(sentAsTyped({ refund_reason: 'x' })).toBe(false);
    expect(sentAsTyped({ fee: { amount: '3.01' } })).toBe(false);
  });
});
