import { describe, expect, expectTypeOf, it } from 'vitest';
import { formBody, post, purchase } from '../test/fixtures.js';
import { createWebhookHandler } from './handler.js';
import type { MiddlewareOptions } from './http/middleware.js';
import { parseNotification } from './notification/parse.js';

// What a webhook definition used by queue workers and the reconciler is: handlers that may run without a request,
// and, when it never receives a delivery, no secret.

describe('a webhook definition without a secret (queue workers)', () => {
  it('runs its handlers with process, and answers a delivery 503 secret.unavailable without reading it', async () => {
    const ran: string[] = [];
    const webhook = createWebhookHandler({ logger: false }).on('purchase', (payment, context) => {
      ran.push(`${payment.payment_id} ${String(context)}`);
    });
    expect(await webhook.process(parseNotification(purchase()))).toBe('handled');
    expect(ran).toEqual([`${purchase().payment_id} undefined`]);
    const answer = await webhook(post(formBody(purchase())), undefined);
    expect(answer).toMatchObject({ status: 503, outcome: 'refused', headers: { 'retry-after': '1' } });
    expect(answer.error?.code).toBe('secret.unavailable');
    expect(answer.error?.message).toBe(
      '[@payhook/core] this webhook was built without a secret (a definition for queue workers, which run handlers with process()): it cannot verify a delivery. Give it `secret` where it receives webhooks.',
    );
    expect(ran).toHaveLength(1);
  });

  it('still throws when built with secret: undefined (an unset environment variable)', () => {
    expect(() => createWebhookHandler({ secret: undefined, logger: false })).toThrow(
      "[@payhook/core] the secret option is undefined: pass the project's secret",
    );
  });

  it('types the context as possibly absent in every handler, and requires a secret of a middleware', () => {
    createWebhookHandler<{ requestId: string }>({
      handle: (_notification, context) =>
        expectTypeOf(context).toEqualTypeOf<{ requestId: string } | undefined>(),
    })
      .on('purchase', (_payment, context) =>
        expectTypeOf(context).toEqualTypeOf<{ requestId: string } | undefined>(),
      )
      .onAny((_notification, context) =>
        expectTypeOf(context?.requestId).toEqualTypeOf<string | undefined>(),
      );
    const needsRequest = (_notification: unknown, context: { requestId: string }) => context.requestId;
    // @ts-expect-error: a handler that needs the request cannot be registered: a worker runs it without one.
    createWebhookHandler<{ requestId: string }>({}).onAny(needsRequest);
    // @ts-expect-error: a middleware receives deliveries, so it has a secret.
    const middleware: MiddlewareOptions<undefined> = { logger: false };
    expect(middleware).toEqual({ logger: false });
  });

  it('aborts delivery.signal with the reason of process’s signal, and settles once the run past its answer settled', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const seen: unknown[] = [];
    const webhook = createWebhookHandler({ logger: false, handlerTimeoutMs: 20 }).on(
      'purchase',
      async (_payment, _context, delivery) => {
        delivery.signal.addEventListener('abort', () => seen.push(delivery.signal.reason));
        await released;
        seen.push('done');
      },
    );
    const caller = new AbortController();
    const answer = webhook.process(parseNotification(purchase()), undefined, { signal: caller.signal });
    await expect(answer).rejects.toMatchObject({ code: 'handler.timeout' });
    let settled = false;
    const settling = webhook.settled().then(() => (settled = true));
    caller.abort('handed back');
    expect(seen).toEqual(['handed back']);
    expect(settled).toBe(false);
    release();
    await settling;
    expect(seen).toEqual(['handed back', 'done']);
  });
});
