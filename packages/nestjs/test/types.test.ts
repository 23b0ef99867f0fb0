import type { IncomingMessage } from 'node:http';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type Delivery,
  type Notification,
  OnAnyNotification,
  OnNotification,
  PayhookModule,
  type PurchaseNotification,
  type RefundNotification,
} from '../src/index.ts';

describe('types of @payhook/nestjs', () => {
  it("takes methods whose parameters fit the event's notifications, the request and the delivery", () => {
    class Handlers {
      @OnNotification('purchase.success')
      fulfil(payment: PurchaseNotification, req: IncomingMessage | undefined, delivery: Delivery) {
        expectTypeOf(payment.order_id).toBeString();
        expectTypeOf(req?.headers).toEqualTypeOf<IncomingMessage['headers'] | undefined>();
        expectTypeOf(delivery).toEqualTypeOf<Delivery>();
      }

      @OnNotification('refund', { inline: true })
      async refund(refund: RefundNotification) {
        expectTypeOf(refund.operation_id).toBeString();
      }

      @OnAnyNotification({ inline: true })
      any(notification: Notification) {
        expectTypeOf(notification).toEqualTypeOf<Notification>();
      }
    }
    expectTypeOf(Handlers).toBeConstructibleWith();
  });

  it('refuses an unknown event, and a method that expects another notification', () => {
    class Wrong {
      // @ts-expect-error: no such event
      @OnNotification('purchase.maybe')
      unknown() {}

      // @ts-expect-error: a refund handler cannot take a purchase
      @OnNotification('refund')
      mismatched(_payment: PurchaseNotification) {}

      // @ts-expect-error: inline is a boolean, as on core's .on
      @OnNotification('refund', { inline: 'yes' })
      notABoolean(_refund: RefundNotification) {}
    }
    expectTypeOf(Wrong).toBeConstructibleWith();
  });

  it('takes the adapter options, and forRootAsync a factory of them', () => {
    PayhookModule.forRoot({ secret: 'types', path: '/hooks', forwardErrors: true, store: false });
    PayhookModule.forRootAsync({ useFactory: async () => ({ secret: 'types' }) });
    // @ts-expect-error: the secret is required
    PayhookModule.forRoot({ path: '/webhooks' });
  });
});
