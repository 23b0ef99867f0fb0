import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { webhookMiddleware } from '@payhook/express';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveCommand } from './cli/serve.js';
import { type FakeServer, startFakeServer } from './server.js';

const SECRET = 'server-test-secret';

interface Merchant {
  url: string;
  server: Server;
  handled: Array<{ order_id: string; status: string }>;
}

async function startMerchant(): Promise<Merchant> {
  const handled: Merchant['handled'] = [];
  const app = express();
  app.use(
    '/webhooks',
    webhookMiddleware({ secret: SECRET, logger: false }).on('purchase', (n) => {
      handled.push({ order_id: n.order_id, status: n.status });
    }),
  );
  app.get('/thanks', (_req, res) => {
    res
      .type('html')
      .send('<!doctype html><title>Thanks</title><h1 id="thanks">Thank you for your order</h1>');
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, handled };
}

function apiHeaders(fake: FakeServer['fake']): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-api-auth': `SVC ${fake.project.apiKey}:${fake.project.apiSecret}`,
    'x-api-key': fake.project.endpointsKey,
  };
}

async function createHosted(server: FakeServer, merchant: Merchant, orderId: string, description: string) {
  return fetch(`${server.url}/api/v1/payment`, {
    method: 'POST',
    headers: apiHeaders(server.fake),
    redirect: 'manual',
    body: JSON.stringify({
      pos_id: server.fake.project.posId,
      mode: 'hosted',
      method: 'purchase',
      amount: 25.5,
      currency: 'XTS',
      description,
      order_id: orderId,
      server_url: `${merchant.url}/webhooks`,
      result_url: `${merchant.url}/thanks`,
    }),
  });
}

describe('the fake service over HTTP', () => {
  let server: FakeServer;
  let merchant: Merchant;

  beforeAll(async () => {
    merchant = await startMerchant();
    server = await startFakeServer({ secret: SECRET, seed: 21, now: '2026-05-05T12:00:00Z' });
  });

  afterAll(async () => {
    await server.close();
    await new Promise((resolve) => merchant.server.close(resolve));
  });

  it('answers a completed checkout page with its status and refuses a second submission with 409', async () => {
    const created = await createHosted(server, merchant, 'http-2', 'Cups');
    const location = created.headers.get('location')!;
    const form = await fetch(location);
    expect(form.status).toBe(200);
    expect(form.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const declined = await fetch(location, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=decline',
      redirect: 'manual',
    });
    expect(declined.status).toBe(303);
    expect(declined.headers.get('location')).toBe(`${merchant.url}/thanks`);
    expect(server.fake.paymentByOrder('http-2')!.record).toMatchObject({
      status: 'failure',
      status_code: '2000',
      limit_info: { retry_after: '2026-05-06T12:00:00', description: 'Daily card limit exceeded' },
    });
    const again = await fetch(location, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=pay',
      redirect: 'manual',
    });
    expect(again.status).toBe(409);
    expect(await (await fetch(location)).text()).toContain('The payment status is failure.');
    const unknown = await fetch(`${server.url}/api/v1/checkout/nope/form`);
    expect(unknown.status).toBe(404);
  });
});

describe('payhook serve', () => {
  function memoryIO(env: Record<string, string> = {}) {
    const out: string[] = [];
    const err: string[] = [];
    let onLine: ((line: string) => void) | undefined;
    return {
      out,
      err,
      waitFor: (prefix: string) =>
        new Promise<string>((resolve) => {
          const found = out.find((l) => l.startsWith(prefix));
          if (found) return resolve(found);
          onLine = (line) => {
            if (line.startsWith(prefix)) resolve(line);
          };
        }),
      io: {
        stdout: (line: string) => {
          out.push(line);
          onLine?.(line);
        },
        stderr: (line: string) => {
          err.push(line);
        },
        stdin: new PassThrough(),
        env,
      },
    };
  }

  it('prints the given and generated credentials, listens, answers the API, and stops on abort', async () => {
    const memory = memoryIO();
    const stop = new AbortController();
    const posId = '7b0c3a56-1f2e-4d3c-9a8b-0c1d2e3f4a5b';
    const done = serveCommand(
      ['--port', '0', '--secret', 'cli-secret', '--pos-id', posId, '--api-key', 'key-1', '--seed', '5'],
      memory.io,
      stop.signal,
    );
    const listening = await memory.waitFor('listening on ');
    const url = listening.slice('listening on '.length);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(memory.out[0]).toBe(`pos_id: ${posId}`);
    expect(memory.out[1]).toBe('api_key: key-1');
    const endpointsKey = memory.out[2]!.slice('endpoints_key: '.length);
    expect(endpointsKey).toMatch(/^ek_[0-9a-f]{24}$/);
    expect(memory.out.join('\n')).not.toContain('cli-secret');

    const response = await fetch(`${url}/api/v1/payment`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': 'SVC key-1:cli-secret',
        'x-api-key': endpointsKey,
      },
      body: JSON.stringify({
        pos_id: posId,
        mode: 'hosted',
        method: 'purchase',
        amount: 1,
        currency: 'XTS',
        description: 'CLI',
        order_id: 'cli-1',
      }),
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toMatch(
      new RegExp(`^${url}/api/v1/checkout/[0-9a-f-]{36}/form$`),
    );
    stop.abort();
    expect(await done).toBe(0);
    await expect(fetch(`${url}/api/v1/payment`)).rejects.toThrow();
  });

  it('exits 2 with the usage when the secret or the port is missing', async () => {
    for (const argv of [
      ['--port', '0'],
      ['--secret', 's'],
      ['--port', 'x', '--secret', 's'],
    ]) {
      const memory = memoryIO();
      expect(await serveCommand(argv, memory.io, new AbortController().signal)).toBe(2);
      expect(memory.err[1]).toContain('Usage: payhook serve');
    }
  });
});
