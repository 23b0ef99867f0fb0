import { describe, expect, it } from 'vitest';
import { RequestError, StoreError, WebhookError } from './errors.js';

describe('WebhookError', () => {
  it('names the package its message comes from: core unless a package built on it says', () => {
    expect(new StoreError('store.unavailable', 'down.').message).toBe('[@payhook/core] down.');
    const fromPayments = new StoreError('store.unavailable', 'down.', { source: '@payhook/payments' });
    expect(fromPayments.message).toBe('[@payhook/payments] down.');
    expect(fromPayments).toBeInstanceOf(WebhookError);
    expect(fromPayments.toJSON()).toEqual({
      code: 'store.unavailable',
      message: '[@payhook/payments] down.',
    });
  });

  it('takes its status and headers from its code', () => {
    const error = new RequestError('request.method_not_allowed', 'POST only.');
    expect([error.status, error.headers]).toEqual([405, { allow: 'POST' }]);
    const unavailable = new StoreError('store.unavailable', 'down.', { cause: new Error('socket') });
    expect([unavailable.status, unavailable.headers, (unavailable.cause as Error).message]).toEqual([
      503,
      { 'retry-after': '1' },
      'socket',
    ]);
  });
});
