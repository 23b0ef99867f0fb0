// A worker in its own process, for the test that kills one with SIGKILL mid-handler. Configured by env: ENGINE (a
// kit of test/engines: bullmq or postgres), QUEUE, STORE_PREFIX, LEDGER (a file), HANG (the handler that never returns).
import { createWorker } from '../src/worker.ts';
import type { EngineKit } from './engines/kit.ts';
import { ledgerWebhook } from './ledger.ts';

const env = process.env;
if (env.ENGINE !== 'bullmq' && env.ENGINE !== 'postgres') {
  throw new Error(`ENGINE is bullmq or postgres, not ${JSON.stringify(env.ENGINE)}`);
}
const { kit } = (await import(`./engines/${env.ENGINE}.ts`)) as { kit: EngineKit };
const engine = kit.makeEngine(env.QUEUE!);
const { store } = await kit.makeStore(env.STORE_PREFIX!);
const webhook = ledgerWebhook(store, env.LEDGER!, env.HANG as 'fulfil' | 'email' | undefined);
await createWorker(webhook, engine, { concurrency: 1, logger: false });
process.stdout.write('ready\n');
