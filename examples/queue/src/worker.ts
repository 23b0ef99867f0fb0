import { createWorker } from '@payhook/queue';
import { readExampleEnv } from '../../shared/src/env.ts';
import { openQueueBackend, workMsFrom } from './backend.ts';
import { paymentWebhook } from './webhook.ts';

// The worker: takes the queued notifications and runs the webhook's handlers, each once per notification, retrying a
// failure with backoff. On SIGTERM or SIGINT it finishes (or hands back) the jobs it runs, waits for every run to
// settle, closes and exits 0.
const { secret } = readExampleEnv(process.env);
const backend = await openQueueBackend(process.env);
const webhook = paymentWebhook({ ...backend, secret, workMs: workMsFrom(process.env) });
const worker = await createWorker(webhook.webhook, backend.queue, { stopOnSignals: false });
console.error(`[payhook example] queue: ${backend.name}`);
console.log('worker ready');

const stop = (signal: NodeJS.Signals) => {
  console.error(`[payhook example] ${signal}: finishing the running jobs`);
  process.off('SIGTERM', stop);
  process.off('SIGINT', stop);
  worker
    .stop()
    // A job handed back may still run here: its store stays open until it committed or gave up.
    .then(() => worker.settled())
    .then(() => backend.close())
    .then(
      () => console.error('[payhook example] closed'),
      (error: unknown) => {
        console.error(`[payhook example] the worker did not close: ${(error as Error).message}`);
        process.exitCode = 1;
      },
    );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
