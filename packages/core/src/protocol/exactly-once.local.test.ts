import { afterEach, describe, expect, it, vi } from 'vitest';
import { recurringCharge, STORE_SECRET, signedPurchase } from '../../test/bodies.js';
import { base, DUPLICATE, FORM, formRequest, HANDLED, sleep } from '../../test/deliveries.js';
import { formBody, purchase } from '../../test/fixtures.js';
import { wrapStore } from '../../test/takeovers.js';
import { createWebhookHandler, type WebhookHandlerOptions } from '../handler.js';
import { MemoryStore } from '../stores/memory.js';

afterEach(() => {
  vi.useRealTimers();
});

// What holds in one process whatever the store: keys of recurring charges, logging, step identity, the
// synchronous path, runs that never settle, refused options. exactly-once.test.ts runs the edges on every store.

describe('recurring charges without transaction_id', () => {
  const charge = (overrides: Record<string, unknown>) =>
    formBody(
      purchase({ transaction_id: undefined, recurring: { id: 'sub-9', status: 'active' }, ...overrides }),
      STORE_SECRET,
    );

  it('handles two charges of one subscription told apart by created_at and processed_at; a redelivery is a duplicate', async () => {
    const seen: string[] = [];
    const webhook = createWebhookHandler({
      ...base(new MemoryStore()),
      handle: (n) => void seen.push(String(n.processed_at)),
    });
    const first = charge({ created_at: '2026-12-01T10:00:00', processed_at: '2026-12-01T10:00:02' });
    const second = charge({ created_at: '2027-01-01T10:00:00', processed_at: '2027-01-01T10:00:02' });
    expect((await webhook(formRequest(first), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(second), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(first), undefined)).body).toBe(DUPLICATE);
    expect(seen).toEqual(['2026-12-01T10:00:02', '2027-01-01T10:00:02']);
  });

  it('never gives two charges one key when processed_at is null', async () => {
    let runs = 0;
    const webhook = createWebhookHandler({ ...base(new MemoryStore()), handle: () => void runs++ });
    const body = charge({ processed_at: null });
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect(runs).toBe(2);
  });

  it('handles a charge that carries nothing to tell it apart every time, and warns', async () => {
    const warnings: string[] = [];
    let runs = 0;
    const webhook = createWebhookHandler({
      secret: STORE_SECRET,
      logger: { warn: (message: string) => void warnings.push(message), error: () => {} },
      handle: () => void runs++,
    });
    const body = charge({ payment_id: 'pay-42', processed_at: undefined });
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect(runs).toBe(2);
    expect(warnings).toEqual(
      Array(2).fill(
        '[@payhook/core] a purchase notification of payment pay-42 carries nothing that tells it apart from another (a recurring charge without transaction_id or processed_at): it is handled without duplicate detection.',
      ),
    );
  });
});

describe('what the handler logs when the application fails', () => {
  it('gives the default logger the thrown error itself (message and stack), and onError the same as cause', async () => {
    const logged: unknown[][] = [];
    const causes: unknown[] = [];
    const thrown = new Error('the shipping service answered 502');
    const webhook = createWebhookHandler({
      secret: STORE_SECRET,
      logger: { warn: () => {}, error: (...args: unknown[]) => void logged.push(args) },
      onError: (error) => void causes.push(error.cause),
      handle: () => {
        throw thrown;
      },
    });
    const result = await webhook({ ...formRequest(signedPurchase()), headers: FORM }, undefined);
    expect(result.status).toBe(500);
    expect(logged).toEqual([
      [
        '[@payhook/core] the application handler failed; the notification was not marked processed and will be handled when redelivered. (handler.failed)',
        thrown,
      ],
    ]);
    expect(causes).toEqual([thrown]);
  });
});

describe('handler identity across deploys', () => {
  it('names a step by its function: a handler added before the others still runs on the redelivery', async () => {
    const store = new MemoryStore();
    const calls: string[] = [];
    let auditFails = true;
    const fulfil = () => void calls.push('fulfil');
    const audit = () => {
      calls.push('audit');
      if (auditFails) {
        auditFails = false;
        throw new Error('the audit log is down');
      }
    };
    const emailReceipt = () => void calls.push('emailReceipt');
    const body = recurringCharge();
    const before = createWebhookHandler(base(store)).on('purchase.success', fulfil).onAny(audit);
    expect((await before(formRequest(body), undefined)).status).toBe(500);
    // The next deploy adds a handler in front of fulfil for the same event.
    const after = createWebhookHandler(base(store))
      .on('purchase.success', emailReceipt)
      .on('purchase.success', fulfil)
      .onAny(audit);
    expect((await after(formRequest(body), undefined)).body).toBe(HANDLED);
    expect(calls).toEqual(['fulfil', 'audit', 'emailReceipt', 'audit']);
  });
});

describe('a lone handler that returns without a promise (handled without tracking a run)', () => {
  it('releases the claim when reading what it returned throws, as awaiting it would: the redelivery is handled', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const webhook = createWebhookHandler({
      ...base(new MemoryStore()),
      // Long enough that a claim left behind would still hold the redelivery (409).
      leaseMs: 60_000,
      inFlightWaitMs: 0,
      onError: (error) => void errors.push(error.cause),
      handle: () => {
        runs++;
        if (runs > 1) return undefined;
        return new Proxy(
          {},
          {
            get(_, property) {
              throw new Error(`a proxy that refuses unknown properties: ${String(property)}`);
            },
          },
        );
      },
    });
    const body = signedPurchase();
    const failed = await webhook(formRequest(body), undefined);
    expect(failed.status).toBe(500);
    expect(failed.error?.message).toContain('the application handler failed');
    expect((errors[0] as Error).message).toBe('a proxy that refuses unknown properties: then');
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(body), undefined)).body).toBe(DUPLICATE);
    expect(runs).toBe(2);
  });

  it('makes a copy wait for a commit still on its way, even past the lease, instead of running the handler again', async () => {
    vi.useFakeTimers();
    const memory = new MemoryStore();
    // Claims at once, commits over the network: the commit lands after the 50 ms lease has run out.
    const store = wrapStore(memory, {
      name: 'slow-commit',
      commit: async (key, token, ttlMs) => {
        await sleep(200);
        return memory.commit(key, token, ttlMs);
      },
    });
    let runs = 0;
    const webhook = createWebhookHandler({
      ...base(store),
      leaseMs: 50,
      handle: () => {
        runs++;
      },
    });
    const body = signedPurchase();
    const first = webhook(formRequest(body), undefined);
    await vi.advanceTimersByTimeAsync(100);
    const copy = webhook(formRequest(body), undefined);
    await vi.advanceTimersByTimeAsync(100);
    expect((await first).body).toBe(HANDLED);
    expect((await copy).body).toBe(DUPLICATE);
    expect(runs).toBe(1);
  });
});

describe('a handler whose promise never settles', () => {
  it('is given up after ten handler timeouts: its claim is no longer renewed, and a redelivery handles the notification', async () => {
    vi.useFakeTimers();
    const store = new MemoryStore();
    const errors: string[] = [];
    const signals: AbortSignal[] = [];
    let runs = 0;
    const options: WebhookHandlerOptions = {
      ...base(store),
      leaseMs: 300,
      handlerTimeoutMs: 50,
      inFlightWaitMs: 0,
      onError: (error) => void errors.push(error.code),
      handle: (_n, _c, delivery) => {
        runs++;
        signals.push(delivery.signal);
        return new Promise(() => {});
      },
    };
    const webhook = createWebhookHandler(options);
    const body = signedPurchase();
    const first = webhook(formRequest(body), undefined);
    await vi.advanceTimersByTimeAsync(100);
    expect((await first).status).toBe(503);
    expect(signals[0]!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1_100); // ten timeouts (500 ms), then the lease runs out (300 ms)
    expect(signals[0]!.aborted).toBe(true);
    expect((signals[0]!.reason as Error).message).toContain('has not settled 10 times handlerTimeoutMs');
    const second = webhook(formRequest(body), undefined);
    await vi.advanceTimersByTimeAsync(100);
    expect((await second).status).toBe(503);
    expect(runs).toBe(2);
    expect(errors.slice(0, 3)).toEqual(['handler.timeout', 'handler.timeout', 'handler.timeout']);
  });
});

describe('options that cannot work', () => {
  it.each([
    ['leaseMs', 0],
    ['storeTimeoutMs', Number.POSITIVE_INFINITY],
    ['handlerTimeoutMs', 2 ** 31],
    ['inFlightWaitMs', -1],
  ] as const)('refuses %s: %s at construction, naming it', (name, value) => {
    expect(() => createWebhookHandler({ secret: STORE_SECRET, [name]: value })).toThrow(
      `[@payhook/core] ${name} must be a number of milliseconds from ${name === 'inFlightWaitMs' ? 0 : 1} to 2147483647, not ${value}.`,
    );
  });
});
