import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DedupeStore, TransactionalStore } from '@payhook/core';
import { readExampleEnv } from './env.ts';
import { createStoreFromEnv } from './store.ts';

/** What an example's app is built from. */
export interface ExampleSetup {
  secret: string;
  store: DedupeStore | TransactionalStore;
}

/**
 * Runs an example: reads the environment, opens the duplicate store, serves the app built by `build` (which may be
 * async: a Fastify app is ready after `app.ready()`, a Nest app after `app.init()`), prints
 * `listening on http://HOST:PORT` when ready, and on SIGTERM or SIGINT stops taking requests, lets the ones in
 * progress finish, closes the store and exits 0. A missing WEBHOOK_SECRET exits 1 with the reason.
 *
 * @example
 * await serveExample((setup) => createApp(setup));
 */
export async function serveExample(
  build: (setup: ExampleSetup) => RequestListener | Promise<RequestListener>,
): Promise<void> {
  let env: ReturnType<typeof readExampleEnv>;
  try {
    env = readExampleEnv(process.env);
  } catch (error) {
    console.error(`[payhook example] ${(error as Error).message}`);
    process.exitCode = 1;
    return;
  }
  const store = await createStoreFromEnv(process.env);
  const server = createServer(await build({ secret: env.secret, store: store.store }));
  await new Promise<void>((resolve) => server.listen(env.port, env.host, resolve));
  const { port } = server.address() as AddressInfo;
  console.error(`[payhook example] duplicate store: ${store.name}`);
  console.log(`listening on http://${env.host}:${port}`);

  const stop = (signal: NodeJS.Signals) => {
    console.error(`[payhook example] ${signal}: closing`);
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    server.close(() => {
      store.close().then(
        () => console.error('[payhook example] closed'),
        (error: unknown) => {
          console.error(`[payhook example] the store did not close: ${(error as Error).message}`);
          process.exitCode = 1;
        },
      );
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
