// A small merchant app for the scenario tests: payhook's Express middleware with the payment ledger, and the app's
// own state at GET /orders/:orderId (what `expect.http` reads). Test code only.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore } from '@payhook/core';
import { webhookMiddleware } from '@payhook/express';
import { createPaymentLedger, type PaymentLedger } from '@payhook/payments';
import express from 'express';

export interface TestApp {
  /** The webhook URL. */
  readonly target: string;
  readonly ledger: PaymentLedger;
  /** `method status order` of every notification the handler ran for, in order. */
  readonly handled: string[];
  close(): Promise<void>;
}

/** Starts the app on a free port of 127.0.0.1. */
export async function startTestApp(secret: string): Promise<TestApp> {
  const ledger = createPaymentLedger();
  const handled: string[] = [];
  const orders = new Map<string, { status: string; handled: number }>();
  const app = express();
  app.get('/orders/:orderId', (req, res) => {
    const order = orders.get(req.params.orderId);
    if (!order) res.status(404).json({ error: 'no such order' });
    else res.json(order);
  });
  app.use(
    webhookMiddleware({ secret, store: new MemoryStore(), ledger, logger: false, path: '/webhooks' }).onAny(
      (notification) => {
        handled.push(`${notification.method} ${notification.status} ${notification.order_id}`);
        const order = orders.get(notification.order_id) ?? { status: 'new', handled: 0 };
        orders.set(notification.order_id, { status: notification.status, handled: order.handled + 1 });
      },
    ),
  );
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  return {
    target: `http://127.0.0.1:${port}/webhooks`,
    ledger,
    handled,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
