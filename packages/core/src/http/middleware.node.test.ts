import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FORM_HEADERS, formBody, purchase, SECRET } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';
import { createNodeListener } from './middleware.js';

const servers: ReturnType<typeof createServer>[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function serve(listener: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('createNodeListener', () => {
  it('answers with the JSON type and the exact length, head and body together', async () => {
    const webhook = createWebhookHandler<IncomingMessage>({
      secret: SECRET,
      logger: false,
      handle: () => {},
    });
    const url = await serve(createNodeListener(webhook));
    const answer = await fetch(url, { method: 'POST', headers: FORM_HEADERS, body: formBody(purchase()) });
    const text = await answer.text();
    expect([answer.status, text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
    expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answer.headers.get('content-length')).toBe(String(text.length));
    expect(answer.headers.get('transfer-encoding')).toBeNull();
  });

  it('settles, without an unhandled rejection, when the application already answered the request', async () => {
    const webhook = createWebhookHandler<IncomingMessage>({
      secret: SECRET,
      logger: false,
      // Settles a turn after the app's own answer was written: the handler's answer then finds it sent.
      handle: () => new Promise((resolve) => setImmediate(resolve)),
    });
    const listener = createNodeListener(webhook);
    let settled: Promise<void> | undefined;
    const url = await serve((request, response) => {
      response.end('answered by the app');
      settled = listener(request, response);
    });
    const answer = await fetch(url, { method: 'POST', headers: FORM_HEADERS, body: formBody(purchase()) });
    expect(await answer.text()).toBe('answered by the app');
    await expect(settled).resolves.toBeUndefined();
  });
});
