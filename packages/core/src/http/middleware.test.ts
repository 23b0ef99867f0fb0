import { describe, expect, it } from 'vitest';
import { FORM, signedForm } from '../../../../test/support/signed-form.ts';
import type { WebhookHandler } from '../handler.js';
import type { Notification } from '../notification/types.js';
import { createMiddleware, type PathMatcher } from './middleware.js';

const SECRET = 'middleware-secret';

function delivery(fields: Record<string, unknown>): { headers: Record<string, string>; body: string } {
  const notification = {
    payment_id: 'p-1',
    order_id: 'o-1',
    pos_id: 'pos-1',
    mode: 'direct',
    amount: 10,
    currency: 'UAH',
    created_at: '2025-01-01T00:00:00',
    ...fields,
  };
  return { headers: { 'content-type': FORM }, body: signedForm(notification, SECRET) };
}

describe('createMiddleware', () => {
  it('hands translate the core handler and forwardErrors (false by default), and returns its middleware', () => {
    const seen: [WebhookHandler<string>, boolean][] = [];
    const translate = (webhook: WebhookHandler<string>, forward: boolean, _handles: PathMatcher) => {
      seen.push([webhook, forward]);
      return () => 'middleware result';
    };
    const plain = createMiddleware<string, () => string>({ secret: SECRET }, translate);
    const forwarding = createMiddleware<string, () => string>(
      { secret: SECRET, forwardErrors: true },
      translate,
    );
    expect(plain()).toBe('middleware result');
    expect(seen.map(([webhook, forward]) => [typeof webhook, forward])).toEqual([
      ['function', false],
      ['function', true],
    ]);
    expect(plain.webhook).toBe(seen[0]![0]);
    expect(forwarding.webhook).toBe(seen[1]![0]);
  });

  it('routes .on and .onAny to the core handler with the context, and chains on the middleware', async () => {
    const calls: [string, string, string][] = [];
    const middleware = createMiddleware<string, () => void>(
      { secret: SECRET, logger: false },
      () => () => {},
    );
    const chained = middleware
      .on('refund', (refund, context) => {
        calls.push(['refund', refund.operation_id, context!]);
      })
      .onAny((notification: Notification, context) => {
        calls.push(['any', notification.method, context!]);
      });
    expect(chained).toBe(middleware);
    const result = await middleware.webhook(
      delivery({ method: 'refund', status: 'success', operation_id: 'op-7' }),
      'the context',
    );
    expect([result.status, result.body]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
    expect(calls).toEqual([
      ['refund', 'op-7', 'the context'],
      ['any', 'refund', 'the context'],
    ]);
  });

  it('hands translate a matcher of the path option: exactly that path, or every path without it', () => {
    const matchers: PathMatcher[] = [];
    const translate = (_webhook: unknown, _forward: boolean, handles: PathMatcher) => {
      matchers.push(handles);
      return () => undefined;
    };
    createMiddleware({ secret: SECRET, path: '/webhooks' }, translate);
    createMiddleware({ secret: SECRET }, translate);
    const paths = ['/webhooks', '/webhooks/', '/Webhooks', '/webhooks/x', '/health', '/'];
    expect(paths.map(matchers[0]!)).toEqual([true, false, false, false, false, false]);
    expect(paths.map(matchers[1]!)).toEqual([true, true, true, true, true, true]);
  });

  it.each([
    ['webhooks', 'not "webhooks"'],
    ['', 'not ""'],
    [42, 'not number'],
  ])('refuses the path %j at construction', (path, end) => {
    expect(() => createMiddleware({ secret: SECRET, path: path as string }, () => () => undefined)).toThrow(
      new TypeError(`[@payhook/core] path must be a string that starts with /, such as '/webhooks', ${end}.`),
    );
  });
});
