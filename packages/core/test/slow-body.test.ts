import { once } from 'node:events';
import {
  type ClientRequest,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookHandler } from '../src/handler.js';
import { createNodeListener } from '../src/http/middleware.js';
import { MemoryStore } from '../src/stores/memory.js';
import { FORM_HEADERS, formBody, purchase, SECRET } from './fixtures.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Stalled {
  response: Promise<Answer>;
}

let server: Server | undefined;
const serverSockets: Socket[] = [];
const clientRequests: ClientRequest[] = [];
const rawClients: Socket[] = [];

afterEach(async () => {
  for (const request of clientRequests.splice(0)) request.destroy();
  for (const socket of rawClients.splice(0)) socket.destroy();
  serverSockets.length = 0;
  if (server) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
  }
});

async function start(readTimeoutMs: number | undefined, handled: string[]): Promise<number> {
  const webhook = createWebhookHandler<IncomingMessage>({
    secret: SECRET,
    store: new MemoryStore(),
    logger: false,
    ...(readTimeoutMs === undefined ? {} : { readTimeoutMs }),
    handle: (notification) => {
      handled.push(notification.order_id);
    },
  });
  server = createServer(createNodeListener(webhook));
  server.on('connection', (socket) => serverSockets.push(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** Sends the request head and `sent` bytes of the body (its full length declared), then stalls without ending. */
function stall(port: number, body: string, sent: number): Stalled {
  const request = httpRequest({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/webhook',
    agent: false,
    headers: { ...FORM_HEADERS, 'content-length': Buffer.byteLength(body) },
  });
  clientRequests.push(request);
  const response = new Promise<Answer>((resolve, reject) => {
    request.on('response', (incoming) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => {
        text += chunk;
      });
      incoming.on('end', () =>
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: text }),
      );
    });
    request.on('error', reject);
  });
  request.flushHeaders();
  if (sent > 0) request.write(body.slice(0, sent));
  return { response };
}

async function deliver(port: number, body: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}/webhook`, {
    method: 'POST',
    headers: FORM_HEADERS,
    body,
  });
  return { status: response.status, body: await response.text() };
}

const TIMEOUT_BODY = {
  ok: false,
  error: {
    code: 'payload.timeout',
    message: '[@payhook/core] the body did not arrive within 150 ms (readTimeoutMs).',
  },
};

describe('a body that arrives slowly (slowloris)', () => {
  it('answers 408 payload.timeout with Connection: close when half the body came and the sender stalled', async () => {
    const handled: string[] = [];
    const port = await start(150, handled);
    const body = formBody(purchase({ order_id: 'slow-1' }));
    const response = await stall(port, body, Math.floor(body.length / 2)).response;
    expect(response.status).toBe(408);
    expect(response.headers.connection).toBe('close');
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(response.body)).toEqual(TIMEOUT_BODY);
    expect(handled).toEqual([]);
  });

  it('answers 408 when only the head came and no body byte followed', async () => {
    const port = await start(150, []);
    const response = await stall(port, formBody(purchase()), 0).response;
    expect(response.status).toBe(408);
    expect(JSON.parse(response.body)).toEqual(TIMEOUT_BODY);
  });

  it('frees the server-side socket after the 408, even when the client keeps its side open', async () => {
    const port = await start(150, []);
    const body = formBody(purchase());
    // A raw, half-open client: it never closes on its own, so a closed server socket was closed by the server.
    const client = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    rawClients.push(client);
    let received = '';
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => {
      received += chunk;
    });
    client.write(
      `POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await once(client, 'end');
    expect(received.startsWith('HTTP/1.1 408 ')).toBe(true);
    expect(received.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(client.destroyed).toBe(false);
    expect(serverSockets).toHaveLength(1);
    const socket = serverSockets[0]!;
    if (!socket.destroyed) await once(socket, 'close');
    expect(socket.destroyed).toBe(true);
    const connections = await new Promise<number>((resolve, reject) =>
      server!.getConnections((error, count) => (error ? reject(error) : resolve(count))),
    );
    expect(connections).toBe(0);
  });

  it('holds no dedup lease: the redelivery right after is handled, once', async () => {
    const handled: string[] = [];
    const port = await start(150, handled);
    const body = formBody(purchase({ order_id: 'slow-2' }));
    const stalled = await stall(port, body, body.length - 5).response;
    expect(stalled.status).toBe(408);

    const first = await deliver(port, body);
    expect(first).toEqual({ status: 200, body: '{"ok":true,"outcome":"handled"}' });
    const again = await deliver(port, body);
    expect(again).toEqual({ status: 200, body: '{"ok":true,"outcome":"duplicate"}' });
    expect(handled).toEqual(['slow-2']);
  });

  it('keeps serving other senders while one stalls', async () => {
    const handled: string[] = [];
    const port = await start(2_000, handled);
    const slow = formBody(purchase({ order_id: 'slow-3' }));
    const stalled = stall(port, slow, 20);
    const fast = await deliver(port, formBody(purchase({ order_id: 'fast-1', payment_id: 'p-fast-1' })));
    expect(fast).toEqual({ status: 200, body: '{"ok":true,"outcome":"handled"}' });
    expect(handled).toEqual(['fast-1']);
    const response = await stalled.response;
    expect(response.status).toBe(408);
    expect(JSON.parse(response.body).error.code).toBe('payload.timeout');
    expect(handled).toEqual(['fast-1']);
  });
});
