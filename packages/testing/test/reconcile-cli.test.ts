import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCli, serveCli } from './run-cli.js';

const SECRET = 'reconcile-e2e-secret';
/** The API secret `payhook serve` checks requests against, other than the webhook secret. */
const API_SECRET = 'api-secret-e2e';

beforeAll(() => {
  assertBuilt();
});

describe('payhook reconcile with payhook serve (built CLI, child processes)', () => {
  it('a webhook dropped by POST /__payhook/faults reaches server_url once payhook reconcile names its order', async () => {
    const service = await serveCli([], { PAYHOOK_SECRET: SECRET, PAYHOOK_API_SECRET: API_SECRET });
    const handled: string[] = [];
    const webhook = createWebhookHandler<IncomingMessage>({
      secret: SECRET,
      logger: false,
      handle: (n) => void handled.push(`${n.order_id} ${n.status}`),
    });
    const merchant = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => merchant.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'payhook-reconcile-e2e-'));
    try {
      const { posId, apiKey, endpointsKey } = service.credentials;
      const admin = (path: string, body: unknown) =>
        fetch(`${service.url}/__payhook/${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': endpointsKey },
          body: JSON.stringify(body),
        });
      expect((await admin('faults', { drop: true })).status).toBe(200);
      const created = await fetch(`${service.url}/api/v1/payment`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-auth': `SVC ${apiKey}:${API_SECRET}`,
          'x-api-key': endpointsKey,
        },
        body: JSON.stringify({
          pos_id: posId,
          mode: 'direct',
          method: 'purchase',
          amount: 25,
          currency: 'XTS',
          description: 'Lost webhook',
          order_id: 'order-lost',
          cc_number: '4242424242424242',
          exp_month: 12,
          exp_year: 2031,
          card_cvv: '123',
          server_url: `http://127.0.0.1:${(merchant.address() as AddressInfo).port}/webhooks`,
        }),
      });
      expect(created.status).toBe(200);
      const dropped = (await (
        await fetch(`${service.url}/__payhook/dropped`, { headers: { 'x-api-key': endpointsKey } })
      ).json()) as unknown[];
      expect(dropped).toHaveLength(1);
      expect(handled).toEqual([]);
      expect((await admin('faults', {})).status).toBe(200);

      const orders = join(dir, 'orders.txt');
      writeFileSync(orders, 'order-lost purchase\n');
      const run = await runCli(
        [
          'reconcile',
          '--base-url',
          service.url,
          '--pos-id',
          posId,
          '--api-key',
          apiKey,
          '--endpoints-key',
          endpointsKey,
          '--orders',
          orders,
        ],
        { env: { PAYHOOK_API_SECRET: API_SECRET } },
      );
      expect(run.stderr).toBe('');
      expect(run.stdout).toBe(
        'order-lost purchase: requested (payment success)\n1 order(s): 1 requested, 0 still pending, 0 failed.\n',
      );
      expect(run.code).toBe(0);
      await expect.poll(() => handled).toEqual(['order-lost success']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await new Promise((resolve) => merchant.close(resolve));
      await service.stop();
    }
  });
});
