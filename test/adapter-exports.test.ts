import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as core from '../packages/core/src/index.ts';
import * as express from '../packages/express/src/index.ts';
import * as fastify from '../packages/fastify/src/index.ts';
import * as koa from '../packages/koa/src/index.ts';
import * as nestjs from '../packages/nestjs/src/index.ts';

/**
 * What an application imports from its adapter instead of @payhook/core (the adapters' READMEs, "Errors"): the error
 * classes, the notification types, the store contract, `MemoryStore`, the options' types and `deferContinue`
 * (for `Expect: 100-continue`, on the server the app runs on). Each adapter keeps
 * its list written out in its `src/index.ts` (no `export *`, STYLE.md); this test holds them to this one list.
 */
const FROM_CORE = {
  types: [
    'AuthNotification',
    'CaptureNotification',
    'CreditNotification',
    'DedupeStore',
    'Delivery',
    'ErrorHook',
    'KeyFunction',
    'LookupNotification',
    'Notification',
    'NotificationEvent',
    'NotificationFor',
    'NotificationHandler',
    'OtherNotification',
    'P2pNotification',
    'PrimaryNotification',
    'PurchaseNotification',
    'RecurringNotification',
    'RefundNotification',
    'SecondaryNotification',
    'Secret',
    'SecretResolver',
    'Secrets',
    'SignatureAlgorithm',
    'TransactionalStore',
    'VoidNotification',
    'WebhookErrorCode',
    'WebhookHandlerOptions',
    'WebhookOutcome',
    'WebhookResult',
  ],
  values: [
    'deferContinue',
    'HandlerError',
    'isRecurring',
    'MemoryStore',
    'notificationKey',
    'PayloadError',
    'RequestError',
    'SERVICE_SENDER_ADDRESSES',
    'SignatureError',
    'StoreError',
    'WebhookError',
  ],
};

/**
 * @payhook/nestjs's subset (its README: "error classes, `MemoryStore` and the notification types"): Nest apps
 * configure the module through `PayhookModuleOptions` and route with decorators, so the handler option types and
 * the per-method notification types stay in @payhook/core.
 */
const NESTJS_FROM_CORE = {
  types: [
    'DedupeStore',
    'Delivery',
    'Notification',
    'NotificationEvent',
    'NotificationFor',
    'NotificationHandler',
    'PurchaseNotification',
    'RecurringNotification',
    'RefundNotification',
    'TransactionalStore',
    'WebhookErrorCode',
    'WebhookResult',
  ],
  values: [
    'deferContinue',
    'HandlerError',
    'MemoryStore',
    'PayloadError',
    'RequestError',
    'SignatureError',
    'StoreError',
    'WebhookError',
  ],
};

const ROOT = join(import.meta.dirname, '..');

/** The names in the `export { … } from '@payhook/core'` and `export type { … }` statements of a source file. */
function reexportsOfCore(path: string): { types: string[]; values: string[] } {
  const source = readFileSync(join(ROOT, path), 'utf8');
  const names = (type: boolean) =>
    [...source.matchAll(/^export (type )?\{([^}]*)\} from '@payhook\/core';/gm)]
      .filter((match) => (match[1] !== undefined) === type)
      .flatMap((match) => match[2]!.split(',').map((name) => name.trim()))
      .filter((name) => name !== '')
      .sort();
  return { types: names(true), values: names(false) };
}

const sorted = (list: { types: string[]; values: string[] }) => ({
  types: [...list.types].sort(),
  values: [...list.values].sort(),
});

const ADAPTERS: [string, Record<string, unknown>, { types: string[]; values: string[] }][] = [
  ['express', express, FROM_CORE],
  ['fastify', fastify, FROM_CORE],
  ['koa', koa, FROM_CORE],
  ['nestjs', nestjs, NESTJS_FROM_CORE],
];

describe.each(ADAPTERS)('@payhook/%s', (name, module, agreed) => {
  const path = `packages/${name}/src/index.ts`;

  it('re-exports from @payhook/core exactly the agreed list, each name written out', () => {
    expect(reexportsOfCore(path)).toEqual(sorted(agreed));
    expect(readFileSync(join(ROOT, path), 'utf8')).not.toMatch(/export \*/);
  });

  it("exports core's own values under those names, not copies", () => {
    for (const value of agreed.values) {
      expect(module[value], value).toBe((core as Record<string, unknown>)[value]);
    }
  });
});

describe('the agreed lists', () => {
  it("name only what @payhook/core's main entry exports", () => {
    const ofCore = readFileSync(join(ROOT, 'packages/core/src/index.ts'), 'utf8');
    const exported = new Set(
      [...ofCore.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap((match) =>
        match[1]!.split(',').map((name) => name.trim()),
      ),
    );
    for (const name of [...FROM_CORE.types, ...FROM_CORE.values]) expect(exported, name).toContain(name);
  });

  it("keep NestJS's list a subset of the other adapters' list", () => {
    for (const name of NESTJS_FROM_CORE.types) expect(FROM_CORE.types).toContain(name);
    for (const name of NESTJS_FROM_CORE.values) expect(FROM_CORE.values).toContain(name);
  });
});
