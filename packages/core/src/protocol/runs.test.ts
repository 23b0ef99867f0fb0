import { afterEach, describe, expect, it, vi } from 'vitest';
import { asyncMemoryStore, FORM_HEADERS, formBody, purchase, SECRET } from '../../test/fixtures.js';
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

describe('runs tracked at once', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps watching every other run when one in the middle or at the front settles first', async () => {
    vi.useFakeTimers();
    const release = new Map<string, () => void>();
    const webhook = createWebhookHandler({
      secret: SECRET,
      logger: false,
      store: asyncMemoryStore(),
      handlerTimeoutMs: 100,
    }).on('purchase.success', (payment) =>
      payment.order_id.startsWith('quick')
        ? undefined
        : new Promise<void>((resolve) => release.set(payment.order_id, resolve)),
    );
    // Tracked in this order; the quick ones leave the list from its front and its middle while the others run.
    const orders = ['quick-1', 'hangs-1', 'quick-2', 'hangs-2', 'hangs-3'];
    const answers = orders.map((order) => webhook.fetch(request(order)));
    await vi.advanceTimersByTimeAsync(150);
    const bodies = await Promise.all(
      answers.map(async (answer) => {
        const response = await answer;
        return [response.status, (await response.json()) as object] as const;
      }),
    );
    expect(bodies.map(([status]) => status)).toEqual([200, 503, 200, 503, 503]);
    expect(bodies[1]![1]).toMatchObject({ error: { code: 'handler.timeout' } });
    let settled = false;
    void webhook.settled().then(() => (settled = true));
    // hangs-3 took the front slot when quick-1 left, hangs-2 the middle one when quick-2 did.
    for (const order of ['hangs-3', 'hangs-1']) {
      release.get(order)!();
      await vi.advanceTimersByTimeAsync(0);
      expect(settled).toBe(false);
    }
    release.get('hangs-2')!();
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(true);
    // Each committed once its handler settled: a copy now is a duplicate.
    for (const order of orders) {
      expect(await (await webhook.fetch(request(order))).json()).toMatchObject({ outcome: 'duplicate' });
    }
  });
});

describe('runs by key', () => {
  it('waits for a run in progress whatever its key spells, __proto__ and toString too', async () => {
    for (const key of ['__proto__', 'toString', 'constructor']) {
      let runs = 0;
      let release = (): void => {};
      const webhook = createWebhookHandler({
        secret: SECRET,
        logger: false,
        store: asyncMemoryStore(),
        key: () => key,
      }).on('purchase.success', async () => {
        runs++;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      });
      const first = webhook.fetch(request('o-1'));
      await vi.waitFor(() => expect(runs).toBe(1));
      // A copy of it while it runs here waits for that run, then answers as the store does.
      const copy = webhook.fetch(request('o-1'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      release();
      expect(await (await first).json()).toMatchObject({ outcome: 'handled' });
      expect(await (await copy).json()).toMatchObject({ outcome: 'duplicate' });
      expect(runs).toBe(1);
    }
  });
});
