import { describe, expect, it } from 'vitest';
import type { DeliveryAttempt } from '../fake/outbox.js';
import { type CheckContext, checkExpectations, type NamedPayment } from './expectations.js';

let ids = 0;
function attempt(
  webhookId: number,
  answer: { status?: number; body?: string; error?: string },
  notification: Record<string, unknown> = { method: 'refund', status: 'success', order_id: 'o-1' },
  extra: Partial<DeliveryAttempt> = {},
): DeliveryAttempt {
  const ok = answer.status !== undefined && answer.status >= 200 && answer.status < 300;
  return {
    webhookId,
    attempt: ++ids,
    duplicate: false,
    url: 'http://app.test/webhooks',
    notification,
    data: '',
    signature: '',
    at: new Date(0),
    ok,
    ...answer,
    ...extra,
  };
}

const answered = (outcome: string, status = 200) => ({ status, body: JSON.stringify({ ok: true, outcome }) });

function context(attempts: DeliveryAttempt[], fetch?: typeof globalThis.fetch): CheckContext {
  const payments = new Map<string, NamedPayment>([
    ['order', { orderId: 'o-1', paymentId: 'p-1', method: 'purchase' }],
  ]);
  return {
    attempts,
    payments,
    target: 'http://app.test/webhooks',
    fetch: fetch ?? (async () => new Response('{}')),
    ledger: {
      get: async (orderId) => (orderId === 'o-1' ? { state: 'paid', refundedAmount: 0 } : undefined),
    },
    unacknowledged: new Set(),
  };
}

describe('expectations', () => {
  it('checks a webhook by its first acknowledged answer, its copies, its count and its status', async () => {
    const attempts = [
      attempt(1, { error: 'lost' }),
      attempt(1, answered('handled')),
      attempt(1, answered('handled')),
      attempt(2, answered('duplicate', 202)),
    ];
    const failures = await checkExpectations(
      {
        webhooks: [
          { event: 'refund success', payment: 'order', count: 3, status: 200, copies: 'duplicate' },
          { event: 'capture success' },
        ],
      },
      context(attempts),
      4,
    );
    expect(failures).toEqual([
      {
        step: 4,
        kind: 'webhook',
        message: 'expected 3 refund success of order webhook(s), 2 were delivered',
      },
      {
        step: 4,
        kind: 'webhook',
        message:
          'a copy of refund success of order (webhook #1, attempt 3) answered handled, expected duplicate',
      },
      {
        step: 4,
        kind: 'webhook',
        message: 'refund success of order (webhook #2) answered 202, expected 200',
      },
      { step: 4, kind: 'webhook', message: 'expected a capture success webhook, none was delivered' },
    ]);
  });

  it('accepts a refusal the scenario expects, and reads an error code as the outcome', async () => {
    const refused = attempt(1, { status: 400, body: '{"ok":false,"error":{"code":"notification.invalid"}}' });
    expect(
      await checkExpectations(
        { webhooks: [{ event: 'refund success', status: 400 }] },
        context([refused]),
        0,
      ),
    ).toEqual([]);
    const failures = await checkExpectations(
      { webhooks: [{ event: 'refund success', outcome: 'handled' }] },
      context([refused, attempt(2, { status: 200, body: 'OK' })]),
      undefined,
    );
    expect(failures.map((f) => f.message)).toEqual([
      'refund success (webhook #1) was never acknowledged: its last attempt got 400 notification.invalid',
      'refund success (webhook #2) answered no outcome, expected handled',
    ]);
  });

  it('compares the ledger entry field by field, and says when it has none', async () => {
    const failures = await checkExpectations(
      { ledger: [{ payment: 'order', state: 'refunded', refundedAmount: 0 }] },
      context([]),
      1,
    );
    expect(failures).toEqual([
      { step: 1, kind: 'ledger', message: `the ledger's state of order is "paid", expected "refunded"` },
    ]);
  });

  it('reads the app over HTTP: its answer status, a body that is not JSON, a network failure, a path into arrays', async () => {
    const urls: string[] = [];
    const fetch = (async (url: string) => {
      urls.push(url);
      if (url.endsWith('/missing')) return new Response('no', { status: 404 });
      if (url.endsWith('/html')) return new Response('<p>hi</p>');
      if (url.endsWith('/down')) throw new Error('connect ECONNREFUSED');
      return new Response(JSON.stringify({ items: [{ state: 'paid' }] }));
    }) as typeof globalThis.fetch;
    const failures = await checkExpectations(
      {
        http: [
          { get: '/missing', json: 'x', equals: 1 },
          { get: '/html', json: 'x', equals: 1 },
          { get: '/down', json: 'x', equals: 1 },
          { get: '/orders/{order}/{order.payment_id}/{nobody}', json: '$.items[0].state', equals: 'paid' },
          { get: '/orders/{order}', json: 'items[0].state.deeper', equals: 'paid' },
        ],
      },
      context([], fetch),
      2,
    );
    expect(failures.map((f) => f.message)).toEqual([
      'GET /missing answered 404',
      expect.stringMatching(/^GET \/html failed: /),
      'GET /down failed: connect ECONNREFUSED',
      'GET /orders/{order}: items[0].state.deeper is undefined, expected "paid"',
    ]);
    expect(urls[3]).toBe('http://app.test/orders/o-1/p-1/%7Bnobody%7D');
  });
});
