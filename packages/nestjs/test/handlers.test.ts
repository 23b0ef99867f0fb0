import type { IncomingMessage } from 'node:http';
import { Body, Controller, Inject, Injectable, Module, Post, Scope } from '@nestjs/common';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { purchase, refund } from '../../../examples/shared/src/deliveries.ts';
import { SECRET } from '../../../test/adapter-conformance.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';
import {
  type Delivery,
  type Notification,
  OnAnyNotification,
  OnNotification,
  PayhookModule,
  type PurchaseNotification,
  type RefundNotification,
} from '../src/index.ts';
import { NEST, nestServer, PLATFORMS } from './apps.ts';

/** A provider the handlers' class gets from Nest's injector. */
@Injectable()
class Ledger {
  readonly entries: string[] = [];
  readonly requests: IncomingMessage[] = [];
}

@Injectable()
class Orders {
  constructor(@Inject(Ledger) private readonly ledger: Ledger) {}

  @OnNotification('purchase.success')
  fulfil(payment: PurchaseNotification, req: IncomingMessage | undefined) {
    this.ledger.entries.push(`fulfil ${payment.order_id}`);
    if (req) this.ledger.requests.push(req);
  }

  @OnNotification('refund')
  @OnNotification('purchase.failure')
  async reverse(notification: RefundNotification | PurchaseNotification) {
    await Promise.resolve();
    this.ledger.entries.push(`reverse ${notification.method}.${notification.status}`);
  }

  @OnAnyNotification()
  audit(notification: Notification, _req: unknown, delivery: Delivery) {
    this.ledger.entries.push(`audit ${notification.method} ${delivery.key}`);
  }

  notAHandler() {
    this.ledger.entries.push('never');
  }
}

/** Other routes of the app keep Nest's own JSON body parser. */
@Controller('orders')
class OrdersController {
  @Post()
  create(@Body() body: unknown) {
    return { received: body };
  }
}

@Module({ providers: [Ledger], exports: [Ledger] })
class LedgerModule {}

@Module({
  imports: [PayhookModule.forRoot({ secret: SECRET, logger: false }), LedgerModule],
  // The alias reaches the same instance: its methods must still run once per notification.
  providers: [Orders, { provide: 'ORDERS_ALIAS', useExisting: Orders }],
  controllers: [OrdersController],
})
class AppModule {}

describe.each(PLATFORMS)(`${NEST}, %s platform: decorated handlers`, (platform) => {
  it("routes each notification to its providers' methods, with what Nest injected, at /webhooks by default", async () => {
    let ledger: Ledger | undefined;
    const server = await nestServer(platform, AppModule, (app) => {
      ledger = app.get(Ledger);
    });
    const post = (body: string) => request(server).post('/webhooks').type(FORM).send(body);

    expect((await post(signedForm(purchase(), SECRET))).text).toBe('{"ok":true,"outcome":"handled"}');
    expect((await post(signedForm(refund(), SECRET))).text).toBe('{"ok":true,"outcome":"handled"}');
    expect((await post(signedForm(purchase(), SECRET))).text).toBe('{"ok":true,"outcome":"duplicate"}');

    expect(ledger?.entries).toEqual([
      'fulfil order-1001',
      'audit purchase 0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c:purchase:success:1000',
      'reverse refund.success',
      'audit refund c4d5e6f7-1a2b-4c3d-8e9f-0a1b2c3d4e5f:refund:success:1000',
    ]);
    expect(ledger?.requests[0]?.method).toBe('POST');
    expect(ledger?.requests[0]?.headers['content-type']).toBe(FORM);
  });

  it("leaves every other route to Nest, with Nest's JSON body parser", async () => {
    const server = await nestServer(platform, AppModule);
    const res = await request(server).post('/orders').send({ order_id: 'order-7' });
    expect([res.status, res.body]).toEqual([201, { received: { order_id: 'order-7' } }]);
    const missing = await request(server).post('/webhooks/other').type(FORM).send('a=1');
    expect(missing.status).toBe(404);
  });

  it('answers at the whole request path, outside a global prefix, which still applies to Nest routes', async () => {
    const server = await nestServer(platform, AppModule, (app) => app.setGlobalPrefix('api'));
    const webhook = await request(server).post('/webhooks').type(FORM).send(signedForm(purchase(), SECRET));
    expect(webhook.text).toBe('{"ok":true,"outcome":"handled"}');
    expect((await request(server).post('/api/webhooks').type(FORM).send('a=1')).status).toBe(404);
    const res = await request(server).post('/api/orders').send({ order_id: 'order-8' });
    expect([res.status, res.body]).toEqual([201, { received: { order_id: 'order-8' } }]);
  });

  it('refuses at bootstrap a handler on a request-scoped provider, naming it', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @OnAnyNotification()
      handle() {}
    }
    @Module({ imports: [PayhookModule.forRoot({ secret: SECRET })], providers: [PerRequest] })
    class ScopedModule {}
    await expect(nestServer(platform, ScopedModule)).rejects.toThrow(
      '[@payhook/nestjs] PerRequest.handle handles notifications but its provider is request-scoped',
    );
  });
});
