import { describe, expect, it } from 'vitest';
import { fakePurchase } from '../index.js';
import { UsageError } from './args.js';
import { applyAssignments, parseAssignment } from './set.js';

describe('--set', () => {
  it.each([
    ['amount=99.5', ['amount'], 99.5],
    ['status_code="1000"', ['status_code'], '1000'],
    ['payload=hello world', ['payload'], 'hello world'],
    ['user_action_required=true', ['user_action_required'], true],
    ['fee.amount=3', ['fee', 'amount'], 3],
    ['recurring={"id":"r1","status":"active"}', ['recurring'], { id: 'r1', status: 'active' }],
    ['description=', ['description'], ''],
    ['expr=a=b', ['expr'], 'a=b'],
  ])('%s', (assignment, path, value) => {
    expect(parseAssignment(assignment)).toEqual({ path, value });
  });

  it('sets dotted paths on a copy, creating objects on the way', () => {
    const purchase = fakePurchase({}, { seed: 1 });
    const changed = applyAssignments(purchase, ['fee.amount=3', 'limit_info.description=limit', 'amount=1']);
    expect(changed.fee).toEqual({ amount: 3, currency: 'UAH' });
    expect(changed.limit_info).toEqual({ description: 'limit' });
    expect(changed.amount).toBe(1);
    expect(purchase.amount).toBe(250.5);
  });

  it.each(['novalue', '=1', 'a..b=1', '__proto__.polluted=1', 'constructor.prototype.x=1'])(
    'refuses %s as a usage error',
    (assignment) => {
      expect(() => applyAssignments({}, [assignment])).toThrowError(UsageError);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );
});
