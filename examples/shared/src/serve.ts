import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readExampleEnv } from './env.ts';
import { createStoreFromEnv, type ExampleStore } from './store.ts';

/** What an example's app is built from: the secret, and what `open` opened (by default the duplicate store). */
export type ExampleSetup<S extends ExampleStore = ExampleStore> = S & { secret: string };

/**
 * Runs an example: reads the environment, opens the duplicate store (or what `open` opens), serves the app built by `build` (which may be
 * async: a Fastify app is ready after `app.ready()`, a Nest app after `app.init()`), prints
 * `listening on http://HOST:PORT` when ready, and on SIGTERM or SIGINT stops taking requests, lets the ones in
 * progress finish, closes the store and exits 0. A missing WEBHOOK_SECRET exits 1 with the reason.
 *
 * @example
 * await serveExample((setup) => createApp(setup));
 */
export async function serveExample<S extends ExampleStore = ExampleStore>(
  build: (setup: ExampleSetup<S>) => RequestListener | Promise<RequestListener>,
  open: (env: NodeJS.ProcessEnv) => Promise<S> = createStoreFromEnv as (env: NodeJS.ProcessEnv) => Promise<S>,
): Promise<void> {
  let env: ReturnType<typeof readExampleEnv>;
  try {
    env = readExampleEnv(process.env);
  } catch (error) {
    console.error(`[payhook example] ${(error as Error).message}`);
    process.exitCode = 1;
    return;
  }
  const store = await open(process.env);
  const server = createServer(await build({ ...store, secret: env.secret }));
  await new Promise<void>((resolve) => server.listen(env.port, env.host, resolve));
  const { port } = server.address() as AddressInfo;
  console.error(`[payhook example] store: ${store.name}`);
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
