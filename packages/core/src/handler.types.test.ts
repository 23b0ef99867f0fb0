import { describe, expect, expectTypeOf, it } from 'vitest';
import { FORM_HEADERS, formBody, purchase, SECRET } from '../test/fixtures.js';
import { createWebhookHandler, type WebhookHandler } from './handler.js';
import type { Notification } from './notification/types.js';
import type { Delivery, Received } from './protocol/delivery.js';
import type { Work } from './protocol/routes.js';

// Types first (`pnpm typecheck` fails on them), with what the types promise checked at run time too.
describe('the handler tells its types as they are', () => {
  it('carries the context as C | undefined wherever a delivery may come without one (fetch, process)', () => {
    expectTypeOf<WebhookHandler<Request>['fetch']>().parameter(1).toEqualTypeOf<Request | undefined>();
    expectTypeOf<Received<Request>['context']>().toEqualTypeOf<Request | undefined>();
    expectTypeOf<Work<Request>['context']>().toEqualTypeOf<Request | undefined>();
  });

  it('hands a fetch delivery without a context to the handlers as undefined', async () => {
    const contexts: unknown[] = [];
    const webhook = createWebhookHandler<Request>({ secret: SECRET, logger: false }).onAny(
      (_notification, context: Request | undefined, _delivery: Delivery) => void contexts.push(context),
    );
    const request = new Request('http://x/webhooks', {
      method: 'POST',
      headers: FORM_HEADERS,
      body: formBody(purchase()),
    });
    expect((await webhook.fetch(request)).status).toBe(200);
    expect(contexts).toEqual([undefined]);
  });

  it('is a WebhookHandler with every method from the moment it is returned', () => {
    const webhook = createWebhookHandler({ secret: 'types-secret' });
    expectTypeOf(webhook).toEqualTypeOf<WebhookHandler<undefined>>();
    // A call without `enqueue: true` (the first overload) never answers as a queue would.
    const processOne = (notification: Notification) => webhook.process(notification);
    expectTypeOf(processOne).returns.resolves.toEqualTypeOf<
      'handled' | 'duplicate' | 'stale' | 'conflict' | 'ignored'
    >();
    for (const method of ['on', 'onAny', 'fetch', 'process', 'settled'] as const) {
      expect(typeof webhook[method], method).toBe('function');
    }
  });
});
