// A worker in its own process, for the test that kills one with SIGKILL mid-handler. Configured by env: ENGINE (the
// engine module of test/engines), QUEUE, STORE_PREFIX, LEDGER (a file), HANG (the handler that never returns).
import { createWorker } from '../src/worker.ts';
import { ledgerWebhook } from './ledger.ts';

const env = process.env;
const kit = (await import(env.ENGINE!)) as typeof import('./engines/bullmq.ts');
const engine = kit.makeEngine(env.QUEUE!);
const { store } = kit.makeStore(env.STORE_PREFIX!);
const webhook = ledgerWebhook(store, env.LEDGER!, env.HANG as 'fulfil' | 'email' | undefined);
await createWorker(webhook, engine, { concurrency: 1, logger: false });
process.stdout.write('ready\n');
