import { notificationKey, parseNotification } from '@payhook/core';
import { describe, expect, it } from 'vitest';
import { fakePurchase } from '../fixtures/primary.js';
import { diffNotifications, maskDelivered, readCaptureLine, readFakeAttempt } from './deliveries.js';

const purchase = fakePurchase({ order_id: 'o-1', amount: 12.5, currency: 'UAH' }, { seed: 'inspect' });

describe('readCaptureLine', () => {
  it('reads a format-1 line, working out the event, order, amount and key from the notification', () => {
    const line = JSON.stringify({
      v: 1,
      at: '2026-11-26T10:00:00.000Z',
      status: 200,
      outcome: 'handled',
      notification: purchase,
    });
    expect(readCaptureLine(line, 3, 7)).toEqual({
      id: 7,
      source: 'capture',
      line: 3,
      at: '2026-11-26T10:00:00.000Z',
      status: 200,
      outcome: 'handled',
      notification: maskDelivered(purchase),
      event: 'purchase.success',
      order: 'o-1',
      payment: purchase.payment_id,
      amount: '12.5 UAH',
      key: notificationKey(parseNotification(purchase)),
    });
  });

  it('reads a format-2 line with its key, duration and hint, and a refused delivery without a notification', () => {
    const line = JSON.stringify({
      v: 2,
      at: 'x',
      status: 401,
      outcome: 'refused',
      code: 'signature.invalid',
      hint: 'sha1',
      key: 'k',
      durationMs: 1.5,
    });
    expect(readCaptureLine(line, 1, 0)).toMatchObject({
      event: '?',
      code: 'signature.invalid',
      hint: 'sha1',
      key: 'k',
      durationMs: 1.5,
    });
    expect(readCaptureLine(line, 1, 0)).not.toHaveProperty('notification');
  });

  it("reads a format-3 line's answer headers, as a fake's attempt's are shown", () => {
    const line = JSON.stringify({
      v: 3,
      at: 'x',
      status: 503,
      outcome: 'refused',
      code: 'store.unavailable',
      answerHeaders: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' },
      notification: purchase,
    });
    expect(readCaptureLine(line, 1, 0)).toMatchObject({
      status: 503,
      code: 'store.unavailable',
      answerHeaders: { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' },
    });
  });

  it.each([
    ['{"v":1,"at":"x","status":2', 'not JSON (a torn or foreign line)'],
    ['{"v":4,"at":"x","status":200}', 'not a captured delivery ({"v":1,…} to {"v":3,…})'],
    [
      '{"v":3,"at":"x","status":200,"answerHeaders":{"retry-after":1}}',
      '"answerHeaders" is not an object of texts',
    ],
    ['{"v":1,"at":1,"status":200}', '"at" is not a string'],
    ['{"v":1,"at":"x","status":"200"}', '"status" is not an HTTP status'],
    ['{"v":2,"at":"x","status":200,"hint":{}}', '"hint" is not a string'],
    ['{"v":2,"at":"x","status":200,"durationMs":"1"}', '"durationMs" is not a number'],
    ['{"v":1,"at":"x","status":200,"notification":[1]}', '"notification" is not an object'],
  ])('names why %s cannot be read, never quoting it', (raw, reason) => {
    expect(readCaptureLine(raw, 9, 0)).toEqual({ line: 9, reason });
  });
});

describe('readFakeAttempt', () => {
  it("reads payhook's answer from the receiver's body, and a failed request's error", () => {
    const at = new Date('2026-11-26T10:00:00Z');
    expect(
      readFakeAttempt({ at, status: 200, body: '{"outcome":"duplicate"}', notification: purchase }, 0),
    ).toMatchObject({
      source: 'fake',
      at: '2026-11-26T10:00:00.000Z',
      outcome: 'duplicate',
      event: 'purchase.success',
    });
    expect(
      readFakeAttempt({ at: at.toISOString(), error: 'fetch failed', notification: purchase }, 1),
    ).toMatchObject({
      id: 1,
      error: 'fetch failed',
    });
    expect(
      readFakeAttempt({ at, status: 401, body: '{"error":{"code":"signature.invalid"}}' }, 2),
    ).toMatchObject({
      code: 'signature.invalid',
    });
  });
});

describe('diffNotifications', () => {
  it('lists changed, added and removed fields at any depth', () => {
    expect(
      diffNotifications(
        { status: 'pending', fee: { amount: 1, currency: 'UAH' }, gone: true },
        { status: 'success', fee: { amount: 2, currency: 'UAH' }, new_field: 'x' },
      ),
    ).toEqual([
      { path: 'status', before: '"pending"', after: '"success"' },
      { path: 'fee.amount', before: '1', after: '2' },
      { path: 'new_field', after: '"x"' },
      { path: 'gone', before: 'true' },
    ]);
  });

  it('finds nothing between two copies of one notification', () => {
    expect(diffNotifications(purchase, structuredClone(purchase))).toEqual([]);
  });
});
