// A client that speaks HTTP/1.1 on a raw socket, so a test sees exactly which bytes the server sends first to a
// request with `Expect: 100-continue` (an HTTP client library hides the interim `100 Continue`).
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';

/** What came back to a request with `Expect: 100-continue`. */
export interface ContinueExchange {
  /** Every byte the server sent, as text: interim answers, the final head and its body. */
  readonly received: string;
  /** Whether the server invited the body (`HTTP/1.1 100 Continue`) before anything else. */
  readonly continued: boolean;
}

/**
 * Sends the head of a POST to `path` with `Expect: 100-continue` and `Connection: close`. Sends `body` only if the
 * server's first bytes are `HTTP/1.1 100 Continue`, then reads until the server closes the connection.
 *
 * @example
 * const { received, continued } = await postExpectingContinue(server, '/webhooks', 'application/json', '{}');
 */
export async function postExpectingContinue(
  server: Server,
  path: string,
  type: string,
  body: string,
  declaredLength: number = Buffer.byteLength(body),
): Promise<ContinueExchange> {
  const { port } = server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${declaredLength}\r\n` +
      'Expect: 100-continue\r\nConnection: close\r\n\r\n',
  );
  let received = '';
  let continued: boolean | undefined;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    received += chunk;
    if (continued === undefined && received.length >= 25) {
      continued = received.startsWith('HTTP/1.1 100 Continue\r\n\r\n');
      if (continued) socket.write(body);
    }
  });
  await once(socket, 'close');
  return { received, continued: continued ?? false };
}

/** Listens on a free loopback port. */
export async function listen(server: Server): Promise<Server> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

/** Closes a server and every connection it holds. */
export async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
