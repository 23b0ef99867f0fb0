import fastify, { type FastifyPluginAsync, type FastifyRequest } from 'fastify';
import { describe, expectTypeOf, it } from 'vitest';
import { SECRET } from '../../../test/adapter-conformance.ts';
import {
  type Delivery,
  type Notification,
  type PurchaseNotification,
  type RecurringNotification,
  type RefundNotification,
  webhookPlugin,
} from '../src/index.ts';

describe('types of @payhook/fastify', () => {
  it('narrows the notification per event and passes Fastify request and the delivery', () => {
    const plugin = webhookPlugin({ secret: SECRET, path: '/webhooks' })
      .on('purchase', (payment, request, delivery) => {
        expectTypeOf(payment).toEqualTypeOf<PurchaseNotification>();
        expectTypeOf(payment.method).toEqualTypeOf<'purchase'>();
        expectTypeOf(request).toEqualTypeOf<FastifyRequest | undefined>();
        expectTypeOf(delivery).toEqualTypeOf<Delivery>();
      })
      .on('refund.success', (refund) => {
        expectTypeOf(refund).toEqualTypeOf<RefundNotification & { status: 'success' }>();
        expectTypeOf(refund.operation_id).toBeString();
      })
      .on('recurring', (charge) => expectTypeOf(charge).toEqualTypeOf<RecurringNotification>(), {
        inline: true,
      })
      .onAny((notification) => expectTypeOf(notification).toEqualTypeOf<Notification>(), { inline: false });
    expectTypeOf(plugin).toExtend<FastifyPluginAsync>();
    void fastify().register(plugin, { prefix: '/api' });
  });

  it('refuses an unknown event and a handler that expects the wrong notification', () => {
    const plugin = webhookPlugin({ secret: SECRET });
    // @ts-expect-error 'purchased' is not an event
    plugin.on('purchased', () => {});
    // @ts-expect-error inline is a boolean, as on core's .on
    plugin.on('refund', () => {}, { inline: 'yes' });
    // @ts-expect-error a purchase handler cannot take a refund
    plugin.on('purchase', (_refund: RefundNotification) => {});
  });
});
