import Router from '@koa/router';
import Koa, { type ParameterizedContext } from 'koa';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type Delivery,
  type Notification,
  type PurchaseNotification,
  type RefundNotification,
  webhookMiddleware,
} from '../src/index.ts';

interface AppState {
  user: string;
}
interface AppContext {
  requestId: string;
}

describe('types of @payhook/koa', () => {
  it("narrows the notification per event and keeps the app's own state and context types", () => {
    const middleware = webhookMiddleware<AppState, AppContext>({ secret: 'types' })
      .on('purchase.success', (payment, ctx, delivery) => {
        expectTypeOf(payment).toEqualTypeOf<PurchaseNotification & { status: 'success' }>();
        expectTypeOf(ctx).toEqualTypeOf<ParameterizedContext<AppState, AppContext> | undefined>();
        expectTypeOf(ctx!.state.user).toBeString();
        expectTypeOf(ctx!.requestId).toBeString();
        expectTypeOf(delivery).toEqualTypeOf<Delivery>();
      })
      .on(
        'refund',
        (refund) => {
          expectTypeOf(refund).toEqualTypeOf<RefundNotification>();
        },
        { inline: true },
      )
      .onAny(
        (notification) => {
          expectTypeOf(notification).toEqualTypeOf<Notification>();
        },
        { inline: true },
      );
    new Koa<AppState, AppContext>().use(middleware);
    new Router<AppState, AppContext>().post('/webhooks', middleware);
  });

  it('refuses an unknown event and a handler that expects the wrong notification', () => {
    const middleware = webhookMiddleware({ secret: 'types' });
    // @ts-expect-error 'purchased' is not an event
    middleware.on('purchased', () => {});
    // @ts-expect-error inline is a boolean, as on core's .on
    middleware.on('refund', () => {}, { inline: 'yes' });
    // @ts-expect-error a refund handler cannot take a purchase
    middleware.on('refund', (_payment: PurchaseNotification) => {});
  });
});
