import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createWebhookHandler,
  type ProcessOptions,
  type WebhookHandler,
  type WebhookOutcome,
} from '@payhook/core';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { purchase } from '../../../packages/core/test/fixtures.ts';
import { signedForm } from '../../../test/support/signed-form.ts';
import type { QueueEngine } from '../src/engine.ts';
import { createWorker, type QueueWorker } from '../src/worker.ts';
import type { EngineKit } from './engines/kit.ts';
import { QUEUE_SECRET, readLedger, shippingWebhook } from './ledger.ts';
import { dropStores, openStore, SHARED_STORES, type SharedStore, STORE_TITLES } from './stores.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CHILD = fileURLToPath(new URL('./shutdown-child.ts', import.meta.url));
const RUN = `${process.pid}-${Date.now()}`;
const WAIT = { timeout: 30_000, interval: 25 };

/**
 * A rolling deploy (issue 35): a worker gets SIGTERM while its handlers outlive `graceMs`, with a second worker
 * up, on every store that holds across processes. Two notifications run in the first worker: one whose handler
 * honours its aborted signal (throws, its work undone) and one whose handler finishes its work anyway. Each
 * handler's effect must be in the ledger once: the first by the second worker, the second by the first worker,
 * which the second worker waits for on the claim and answers `duplicate`.
 */
export function describeRollingDeploy(kit: EngineKit, up: boolean): void {
  describe.skipIf(!up)(`a rolling deploy on ${kit.title}`, () => {
    const engines: QueueEngine[] = [];
    const workers: QueueWorker[] = [];
    const closers: Array<() => Promise<void>> = [];
    const dir = mkdtempSync(join(tmpdir(), 'payhook-deploy-'));

    afterEach(async () => {
      await Promise.all(workers.splice(0).map((worker) => worker.stop()));
      await Promise.all(engines.splice(0).map((made) => made.close()));
      await Promise.all(closers.splice(0).map((close) => close()));
    });
    afterAll(async () => {
      rmSync(dir, { recursive: true, force: true });
      await dropStores();
      await kit.dispose();
    });

    it.each(SHARED_STORES.map((kind) => [STORE_TITLES[kind], kind] as const))(
      'with %s: SIGTERM past graceMs aborts the handlers’ signals, runs each handler’s effect once, and closes the store only after',
      async (_, kind: SharedStore) => {
        const name = `${RUN}-${kind}`;
        const queue = kit.makeEngine(`payhook-deploy-${name}`, { attempts: 10 });
        engines.push(queue);
        const ledger = join(dir, `${kind}.ledger`);
        // Opened (and migrated) first: a migration waits on the table's locks, which the first worker's inbox holds.
        const { store, close } = await openStore(kind, name);
        closers.push(close);
        const first = startChild({
          ENGINE: kit.id,
          QUEUE: `payhook-deploy-${name}`,
          STORE: kind,
          STORE_NAME: name,
          LEDGER: ledger,
          GRACE_MS: '200',
        });
        closers.push(async () => void first.process.kill('SIGKILL'));
        await first.said('ready');

        const honour = purchase({
          payment_id: randomUUID(),
          order_id: `honour-${randomUUID()}`,
          transaction_id: randomUUID(),
        });
        const finish = purchase({
          payment_id: randomUUID(),
          order_id: `finish-${randomUUID()}`,
          transaction_id: randomUUID(),
        });
        const web = createWebhookHandler({ secret: QUEUE_SECRET, logger: false, queue }).on(
          'purchase',
          () => {},
        );
        for (const raw of [honour, finish]) {
          const body = signedForm(raw, QUEUE_SECRET);
          const answer = await web(
            { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body },
            undefined,
          );
          expect(answer.outcome).toBe('queued');
        }
        await first.said(`inside ${honour.payment_id}`);
        await first.said(`inside ${finish.payment_id}`);

        // The second worker, up before the first is told to stop: it records what each attempt came to.
        const seen: string[] = [];
        const second = observed(shippingWebhook(store, ledger, 'second'), seen);
        workers.push(
          await createWorker(second, queue, { concurrency: 2, stopOnSignals: false, logger: false }),
        );

        first.process.kill('SIGTERM');
        await first.said(`aborted ${honour.payment_id}`);
        await first.said(`aborted ${finish.payment_id}`);
        // The second worker took the job handed back, and waits on the claim the first run still holds.
        await vi.waitFor(() => expect(seen).toContain(`notification.in_flight ${finish.payment_id}`), WAIT);
        expect(readLedger(ledger)).toEqual([`ship ${honour.payment_id} by second`]);
        first.process.stdin!.write('go\n');
        await first.said('shutdown');
        // onShutdown came after the run finished its work, and its commit: the second worker sees a duplicate.
        expect(readLedger(ledger)).toEqual(
          [`ship ${honour.payment_id} by second`, `ship ${finish.payment_id} by first`].sort(),
        );
        expect(await first.exited).toBe(0);
        await vi.waitFor(() => expect(seen).toContain(`duplicate ${finish.payment_id}`), WAIT);
        expect(seen).toContain(`handled ${honour.payment_id}`);
        expect(readLedger(ledger)).toEqual(
          [`ship ${honour.payment_id} by second`, `ship ${finish.payment_id} by first`].sort(),
        );
        expect(await queue.dead()).toEqual([]);
      },
      60_000,
    );
  });
}

/** `webhook` as a worker uses it, each `process` outcome or refusal code recorded with the payment. */
function observed(webhook: WebhookHandler, seen: string[]): WebhookHandler {
  const process: WebhookHandler['process'] = async (notification, context, options) => {
    try {
      // A worker never asks process to enqueue.
      const outcome: Exclude<WebhookOutcome, 'refused' | 'queued'> = await webhook.process(
        notification,
        context,
        options as ProcessOptions & { enqueue?: false },
      );
      seen.push(`${outcome} ${notification.payment_id}`);
      return outcome;
    } catch (error) {
      seen.push(`${(error as { code?: string }).code} ${notification.payment_id}`);
      throw error;
    }
  };
  return Object.assign((...args: Parameters<WebhookHandler>) => webhook(...args), webhook, {
    process,
    settled: () => webhook.settled(),
  });
}

/** A child worker: resolves each line it says once it says it, and its exit code. */
function startChild(env: Record<string, string>): {
  process: ChildProcess;
  said(line: string): Promise<void>;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const lines = () => out.split('\n');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waiting: Array<{ line: string; resolve: () => void }> = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const wait of waiting) if (lines().includes(wait.line)) wait.resolve();
  });
  return {
    process: child,
    exited,
    said: (line) =>
      new Promise<void>((resolve, reject) => {
        if (lines().includes(line)) return resolve();
        waiting.push({ line, resolve });
        void exited.then((code) => {
          if (!lines().includes(line))
            reject(new Error(`the child worker exited (${code}) before saying ${line}`));
        });
      }),
  };
}
