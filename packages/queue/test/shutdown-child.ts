// A worker in its own process, for the rolling-deploy test: SIGTERM while its handler outlives graceMs. Configured
// by env: ENGINE (a kit of test/engines), QUEUE, STORE (redis, postgres or inbox), STORE_NAME, LEDGER (a file),
// GRACE_MS. Its handler says `inside <payment>`, then `aborted <payment>` when delivery.signal aborts; for an order
// `honour-…` it then throws (the work undone), for any other it waits for `go` on stdin and finishes the work
// (`committed <payment>`). onShutdown closes the store as the docs say, then says `shutdown`.
import { createInterface } from 'node:readline';
import { createWorker } from '../src/worker.ts';
import type { EngineKit } from './engines/kit.ts';
import { shippingWebhook } from './ledger.ts';
import { openStore, type SharedStore } from './stores.ts';

const env = process.env;
const say = (line: string) => process.stdout.write(`${line}\n`);
const { kit } = (await import(`./engines/${env.ENGINE}.ts`)) as { kit: EngineKit };
const engine = kit.makeEngine(env.QUEUE!, { attempts: 10 });
const { store, close } = await openStore(env.STORE as SharedStore, env.STORE_NAME!);
const go = new Promise<void>((resolve) => {
  createInterface({ input: process.stdin }).on('line', (line) => line === 'go' && resolve());
});
const webhook = shippingWebhook(store, env.LEDGER!, 'first', async (payment, signal) => {
  say(`inside ${payment.payment_id}`);
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  say(`aborted ${payment.payment_id}`);
  if (payment.order_id.startsWith('honour-')) throw signal.reason;
  await go;
});
await createWorker(webhook, engine, {
  concurrency: 2,
  graceMs: Number(env.GRACE_MS),
  logger: false,
  onShutdown: async () => {
    await close();
    say('shutdown');
    process.stdin.destroy();
  },
});
say('ready');
