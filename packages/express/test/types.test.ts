import type { Request, RequestHandler } from 'express';
import { describe, expectTypeOf, it } from 'vitest';
import { SECRET } from '../../../test/adapter-conformance.ts';
import {
  type Delivery,
  type Notification,
  type PurchaseNotification,
  type RecurringNotification,
  type RefundNotification,
  webhookMiddleware,
} from '../src/index.ts';

describe('types of @payhook/express', () => {
  it('narrows the notification per event and passes Express req and the delivery', () => {
    const middleware = webhookMiddleware({ secret: SECRET })
      .on('purchase', (payment, req, delivery) => {
        expectTypeOf(payment).toEqualTypeOf<PurchaseNotification>();
        expectTypeOf(payment.method).toEqualTypeOf<'purchase'>();
        expectTypeOf(req).toEqualTypeOf<Request | undefined>();
        expectTypeOf(delivery).toEqualTypeOf<Delivery>();
      })
      .on(
        'refund.success',
        (refund) => {
          expectTypeOf(refund).toEqualTypeOf<RefundNotification & { status: 'success' }>();
          expectTypeOf(refund.operation_id).toBeString();
        },
        { inline: true },
      )
      .on('recurring', (charge) => {
        expectTypeOf(charge).toEqualTypeOf<RecurringNotification>();
        expectTypeOf(charge.recurring.id).toBeString();
      })
      .onAny(
        (notification) => {
          expectTypeOf(notification).toEqualTypeOf<Notification>();
        },
        { inline: true },
      );
    expectTypeOf(middleware).toExtend<RequestHandler>();
  });

  it('refuses an unknown event and a handler that expects the wrong notification', () => {
    const middleware = webhookMiddleware({ secret: SECRET });
    // @ts-expect-error 'purchased' is not an event
    middleware.on('purchased', () => {});
    // @ts-expect-error inline is a boolean, as on core's .on
    middleware.on('refund', () => {}, { inline: 'yes' });
    // @ts-expect-error a purchase handler cannot take a refund
    middleware.on('purchase', (_refund: RefundNotification) => {});
  });
});
