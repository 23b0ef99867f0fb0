import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeListener, type WebhookHandler } from '@payhook/core';

/** The secret the planted apps and their scenarios share. */
export const PLANTED_SECRET = 'planted-bug-secret';

/** A planted app's code: its webhook handler and what it knows of an order (`undefined`: nothing). */
export interface PlantedInstance {
  readonly webhook: WebhookHandler<IncomingMessage>;
  readonly order: (orderId: string) => unknown;
}

/**
 * A planted app on a real port: `POST /webhooks` to its handler, `GET /orders/<order_id>` its state of the order
 * as JSON (404 when it has none), as a merchant's app shows an order.
 */
export interface PlantedApp {
  /** The webhook URL, the scenario's target. */
  readonly url: string;
  /** Forgets everything, state and duplicate store: the app as freshly started. */
  reset(): void;
  close(): Promise<void>;
}

const ORDER = /^\/orders\/([^/?]+)$/;

/** Starts a planted app on 127.0.0.1 at a free port. */
export async function startPlantedApp(build: () => PlantedInstance): Promise<PlantedApp> {
  let instance = build();
  let listener = createNodeListener(instance.webhook);
  const server = createServer((request, response) => {
    const order = request.method === 'GET' ? ORDER.exec(request.url ?? '') : null;
    if (order) {
      const state = instance.order(decodeURIComponent(order[1]!));
      response.writeHead(state === undefined ? 404 : 200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(state ?? { error: 'no such order' }));
      return;
    }
    void listener(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    reset() {
      instance = build();
      listener = createNodeListener(instance.webhook);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
