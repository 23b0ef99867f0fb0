import { signedForm } from '../../../test/support/signed-form.ts';
import { createWebhookHandler, type WebhookHandlerOptions, type WebhookRequest } from '../src/handler.js';
import type { Notification } from '../src/notification/types.js';
import type { DedupeStore } from '../src/stores/contract.js';
import { MemoryStore } from '../src/stores/memory.js';

export const SECRET = 'test-secret-7f3a';

/** A primary-operation notification as the service sends it (spec 2.1, 6.1). */
export function purchase(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    payment_id: '8f3f5a0e-1d2c-4b5a-9e8f-7a6b5c4d3e2f',
    order_id: 'order-1001',
    gateway_order_id: 'gw-555',
    transaction_id: '0c1b2a39-4d5e-4f60-8172-9a8b7c6d5e4f',
    pos_id: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e',
    mode: 'direct',
    method: 'purchase',
    amount: 150.25,
    currency: 'UAH',
    status: 'success',
    status_code: '1000',
    status_description: 'Transaction is successful',
    cc_mask: '444455******1111',
    cc_token: 'tok_9c8b7a6f5e4d3c2b1a',
    fee: { amount: 3.01, currency: 'UAH' },
    created_at: '2026-11-22T10:15:00',
    processed_at: '2026-11-22T10:15:03.120',
    ...overrides,
  };
}

export function refund(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    operation_id: '5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9',
    payment_id: '8f3f5a0e-1d2c-4b5a-9e8f-7a6b5c4d3e2f',
    order_id: 'order-1001',
    pos_id: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e',
    mode: 'direct',
    method: 'refund',
    amount: 50,
    currency: 'UAH',
    status: 'success',
    status_code: '1000',
    created_at: '2026-11-23T09:00:00',
    ...overrides,
  };
}

/** The form body the service posts for `notification`, signed with `secret`. */
export function formBody(notification: unknown, secret = SECRET): string {
  return signedForm(notification, secret);
}

export const FORM_HEADERS = { 'content-type': 'application/x-www-form-urlencoded' };

/** A POST with `body` as the raw text a framework kept, from loopback. */
export function post(body: unknown, headers: Record<string, string> = FORM_HEADERS): WebhookRequest {
  return { method: 'POST', headers, body, remoteAddress: '127.0.0.1' };
}

/** A handler with the test secret that collects what it handles in `seen`. */
export function setup(options: Partial<WebhookHandlerOptions> = {}) {
  const seen: Notification[] = [];
  const handler = createWebhookHandler({
    secret: SECRET,
    logger: false,
    handle: (notification) => {
      seen.push(notification);
    },
    ...options,
  });
  return { handler, seen };
}

/** A `MemoryStore` whose every method answers with a promise, as a store over the network does. */
export function asyncMemoryStore(name = 'async-memory'): DedupeStore {
  const memory = new MemoryStore();
  return {
    name,
    claim: async (key, leaseMs) => memory.claim(key, leaseMs),
    renew: async (key, token, leaseMs) => memory.renew(key, token, leaseMs),
    commit: async (key, token, ttlMs) => memory.commit(key, token, ttlMs),
    release: async (key, token) => memory.release(key, token),
  };
}
