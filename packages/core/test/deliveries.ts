import { createWebhookHandler, type WebhookHandlerOptions } from '../src/handler.js';
import type { DedupeStore, TransactionalStore } from '../src/stores/contract.js';
import { STORE_SECRET } from './bodies.js';

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' } as const;

/** A `WebhookRequest` carrying `body` as the raw text a framework kept. */
export function formRequest(body: string) {
  return { method: 'POST', headers: { ...FORM }, body };
}

/** POSTs a delivery; resolves the status and the parsed JSON body. */
export async function post(
  url: string,
  body: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: FORM, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Runs `tasks` with at most `limit` at a time, keeping results in order. */
export async function pool<T>(limit: number, tasks: ReadonlyArray<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, tasks.length) }, async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  });
  await Promise.all(workers);
  return results;
}

export const HANDLED = '{"ok":true,"outcome":"handled"}';
export const DUPLICATE = '{"ok":true,"outcome":"duplicate"}';

/** A promise the test settles: a gate a handler waits on. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export const sleep = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));

/** The options every store test starts from: the store under test, its secret, no logging. */
export function base(store: DedupeStore | TransactionalStore): WebhookHandlerOptions {
  return { secret: STORE_SECRET, store, logger: false };
}

/** A handler over `options` whose application handler only counts its runs. */
export function countingHandler(options: WebhookHandlerOptions) {
  let runs = 0;
  const webhook = createWebhookHandler({ ...options, handle: () => void runs++ });
  return { webhook, runs: () => runs };
}
