import { describe, expect, it } from 'vitest';
import { SECRET } from '../test/fixtures.js';
import { createCapture } from './diagnostics/capture.js';
import { createWebhookHandler, type WebhookHandlerOptions } from './handler.js';
import { SERVICE_SENDER_ADDRESSES } from './http/sender.js';
import { MemoryStore } from './stores/memory.js';

const P = '[@payhook/core]';
const MS = 'a number of milliseconds from 1 to 2147483647';

// Every option of createWebhookHandler is checked when the handler is built: a wrong one is a TypeError naming it,
// instead of a handler that fails on its first delivery (or never uses the option).
describe('createWebhookHandler: a wrong option throws a TypeError naming it, when the handler is built', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['key', { key: 'x' }, `${P} key must be a function, not "x".`],
    [
      'allowedSenders',
      { allowedSenders: '35.187.74.148' },
      `${P} allowedSenders must be an array of strings, not "35.187.74.148".`,
    ],
    [
      'allowedSenders',
      { allowedSenders: [35] },
      `${P} allowedSenders must be an array of strings, not an array.`,
    ],
    ['onError', { onError: 1 }, `${P} onError must be a function, not 1.`],
    ['handle', { handle: {} }, `${P} handle must be a function, not an object.`],
    ['algorithm', { algorithm: 'md5' }, `${P} algorithm must be 'sha256' or 'sha1', not "md5".`],
    ['leaseMs', { leaseMs: 0 }, `${P} leaseMs must be ${MS}, not 0.`],
    [
      'handlerTimeoutMs',
      { handlerTimeoutMs: 2 ** 31 },
      `${P} handlerTimeoutMs must be ${MS}, not 2147483648.`,
    ],
    ['storeTimeoutMs', { storeTimeoutMs: '2000' }, `${P} storeTimeoutMs must be ${MS}, not "2000".`],
    ['readTimeoutMs', { readTimeoutMs: Number.NaN }, `${P} readTimeoutMs must be ${MS}, not NaN.`],
    [
      'inFlightWaitMs',
      { inFlightWaitMs: -1 },
      `${P} inFlightWaitMs must be a number of milliseconds from 0 to 2147483647, not -1.`,
    ],
    ['ttlMs', { ttlMs: -5 }, `${P} ttlMs must be a positive number, not -5.`],
    [
      'maxBodyBytes',
      { maxBodyBytes: Number.POSITIVE_INFINITY },
      `${P} maxBodyBytes must be a positive number, not Infinity.`,
    ],
    ['failOpen', { failOpen: 'yes' }, `${P} failOpen must be true or false, not "yes".`],
    [
      'trustProxy',
      { trustProxy: 1.5 },
      `${P} trustProxy must be true, false or a number of proxies, not 1.5.`,
    ],
    [
      'ledger',
      { ledger: { name: 'x' } as never },
      `${P} ledger must be a WebhookLedger (an object with record, as createPaymentLedger of @payhook/payments builds), not an object.`,
    ],
    [
      'logger',
      { logger: { warn: () => {} } },
      `${P} logger must be false or an object with warn and error, such as console, not an object.`,
    ],
    [
      'store',
      { store: new Map() },
      `${P} store must be a DedupeStore (claim, renew, commit and release), a TransactionalStore (transaction) or false, not an object.`,
    ],
    [
      'queue',
      { queue: {} },
      `${P} queue must be a NotificationQueue (an object with enqueue, as @payhook/queue builds), not an object.`,
    ],
    [
      'capture',
      { capture: { path: 'x' } },
      `${P} capture must be made by createCapture({ path | write, … }), not an object.`,
    ],
  ])('refuses %s: %j', (_name, options, message) => {
    expect(() =>
      createWebhookHandler({ secret: SECRET, ...options } as WebhookHandlerOptions<unknown>),
    ).toThrow(new TypeError(message));
  });

  it.each<[string, Partial<WebhookHandlerOptions<unknown>>]>([
    ['no option but the secret', {}],
    [
      'every option at a valid value',
      {
        algorithm: 'sha1',
        allowedSenders: SERVICE_SENDER_ADDRESSES,
        trustProxy: 2,
        handle: () => {},
        onError: () => {},
        key: (n) => n.payment_id,
        store: new MemoryStore(),
        leaseMs: 1,
        ttlMs: 0.5,
        inFlightWaitMs: 0,
        handlerTimeoutMs: 2 ** 31 - 1,
        storeTimeoutMs: 2_000,
        maxBodyBytes: 65_536,
        readTimeoutMs: 10_000,
        ledger: { name: 'audit', record: () => ({ outcome: 'handle' as const }) },
        failOpen: true,
        logger: console,
        queue: { enqueue: async () => 'queued' as const },
        capture: createCapture({ write: () => {} }),
      },
    ],
    ['the switches off', { store: false, logger: false, trustProxy: true, failOpen: false }],
  ])('builds with %s', (_name, options) => {
    expect(
      typeof createWebhookHandler({ secret: SECRET, ...options } as WebhookHandlerOptions<unknown>),
    ).toBe('function');
  });
});
