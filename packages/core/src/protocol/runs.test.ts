import { afterEach, describe, expect, it, vi } from 'vitest';
import { FORM_HEADERS, formBody, purchase, SECRET } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';

/**
 * Timers as workerd (Cloudflare Workers) has them: `setInterval` returns a number, with no `ref`/`unref`, and
 * every timer a request set is cancelled once that request has answered (`endRequest`).
 */
function workerdTimers() {
  const real = { set: globalThis.setInterval, clear: globalThis.clearInterval };
  const live = new Map<number, ReturnType<typeof setInterval>>();
  let next = 1;
  vi.stubGlobal('setInterval', (callback: () => void, ms: number) => {
    const id = next++;
    live.set(id, real.set(callback, ms));
    return id;
  });
  vi.stubGlobal('clearInterval', (id: number | undefined) => {
    const timer = id === undefined ? undefined : live.get(id);
    if (timer !== undefined) real.clear(timer);
    live.delete(id as number);
  });
  return {
    live,
    endRequest() {
      for (const [id, timer] of live) {
        real.clear(timer);
        live.delete(id);
      }
    },
  };
}

const request = (orderId: string) =>
  new Request('http://payhook.test/webhooks', {
    method: 'POST',
    headers: FORM_HEADERS,
    body: formBody(purchase({ order_id: orderId, payment_id: `p-${orderId}` })),
  });

describe('timers that are numbers and die with their request (workerd)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it('handles a delivery, leaves no timer behind, and still answers a later hanging handler with handler.timeout', async () => {
    vi.useFakeTimers();
    const timers = workerdTimers();
    const webhook = createWebhookHandler({ secret: SECRET, logger: false, handlerTimeoutMs: 100 }).on(
      'purchase.success',
      (payment) => (payment.order_id === 'hangs' ? new Promise<void>(() => {}) : undefined),
    );

    const first = await webhook.fetch(request('o-1'));
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ outcome: 'handled' });
    expect(timers.live.size).toBe(0);
    timers.endRequest();

    // A timer shared with the first request would be dead here, and this answer would never come.
    const answer = webhook.fetch(request('hangs'));
    await vi.advanceTimersByTimeAsync(150);
    const second = await answer;
    expect(second.status).toBe(503);
    expect(await second.json()).toMatchObject({ error: { code: 'handler.timeout' } });
    const again = await webhook.fetch(request('o-1'));
    expect(await again.json()).toMatchObject({ outcome: 'duplicate' });
  });
});
