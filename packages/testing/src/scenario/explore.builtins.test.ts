import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { createPaymentLedger } from '@payhook/payments';
import { afterEach, describe, expect, it } from 'vitest';
import { builtInScenarios } from './builtins.js';
import { exploreScenario } from './explore.js';

const SECRET = 'explore-builtins-secret';
const servers: Server[] = [];

afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A correct app: core's handler on its default MemoryStore with a payment ledger, the ledger read by the run. */
async function correctApp() {
  const ledger = createPaymentLedger();
  const webhook = createWebhookHandler<IncomingMessage>({
    secret: SECRET,
    ledger,
    logger: false,
    handle: () => {},
  });
  const server = createServer(createNodeListener(webhook));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { target: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, ledger };
}

describe('exploring the built-in lives against a correct app', () => {
  it.each(builtInScenarios().map((scenario) => [scenario.name]))(
    '%s passes every drawn run',
    async (name) => {
      const { target, ledger } = await correctApp();
      const result = await exploreScenario(name, { target, ledger, secret: SECRET, runs: 30, seed: 1 });
      expect(result.failure?.file).toBeUndefined();
      expect(result).toEqual({ runs: 30, seed: 1 });
    },
  );
});
