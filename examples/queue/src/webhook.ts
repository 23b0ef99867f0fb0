import { setTimeout as sleep } from 'node:timers/promises';
import type { DedupeStore, NotificationQueue } from '@payhook/core';
import { type ExpressWebhookMiddleware, webhookMiddleware } from '@payhook/express';
import { printNotification } from '../../shared/src/output.ts';

/** What the web process and the worker build the webhook from. */
export interface WebhookSetup {
  secret: string;
  /** Where each handler's completion is recorded: shared by every worker. */
  store: DedupeStore;
  queue: NotificationQueue;
  /** How long each notification's work takes (the example's stand-in for fulfilling an order). */
  workMs: number;
}

/**
 * The one webhook both processes import: the web process answers with it (verify, then enqueue), the worker runs its
 * handlers (`createWorker(webhook.webhook, queue)`). Defining the handlers once keeps their order and their ids the
 * same on both sides.
 *
 * @example
 * const webhook = paymentWebhook({ secret, store, queue, workMs: 0 });
 */
export function paymentWebhook(setup: WebhookSetup): ExpressWebhookMiddleware {
  const { secret, store, queue, workMs } = setup;
  return webhookMiddleware({ secret, store, queue, path: '/webhooks' }).onAny(
    async (notification, _req, delivery) => {
      // Your code: fulfil the order, email the receipt... It runs in a worker, once per notification; throw to retry.
      if (workMs > 0) await sleep(workMs, undefined, { signal: delivery.signal });
      printNotification(notification, delivery);
    },
  );
}
