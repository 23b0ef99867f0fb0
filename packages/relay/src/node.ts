import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Relay } from './relay.js';

// The @payhook/relay/node entry: the Fetch handler behind node:http (or node:https), streaming answers (SSE) as
// they are produced and cancelling them when the client goes away.

/**
 * A certificate and key to serve HTTPS directly (the service delivers to 443 or 8443), PEM text or buffers.
 *
 * @example
 * createRelayServer(relay, { tls: { cert: readFileSync('fullchain.pem'), key: readFileSync('privkey.pem') } });
 */
export interface RelayServerOptions {
  tls?: { cert: string | Buffer; key: string | Buffer };
}

const SAFE_HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const host =
    req.headers.host !== undefined && SAFE_HOST.test(req.headers.host) ? req.headers.host : 'localhost';
  const scheme = (req.socket as TLSSocket).encrypted ? 'https' : 'http';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const init = {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  };
  return new Request(`${scheme}://${host}${req.url ?? '/'}`, init as RequestInit);
}

/** Resolves once the response can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

async function send(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done || res.destroyed) break;
    if (!res.write(value)) await drained(res);
  }
  res.end();
}

/**
 * A `node:http` request listener over the relay: for an existing server, or Express (`app.use(listener)`).
 *
 * @example
 * http.createServer(createRelayListener(relay)).listen(8443);
 */
export function createRelayListener(relay: Relay): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    let request: Request;
    try {
      request = toRequest(req, gone.signal);
    } catch {
      res.writeHead(400).end();
      return;
    }
    relay
      .fetch(request, { remoteAddress: req.socket.remoteAddress })
      .then((response) => send(response, res))
      .catch(() => res.destroy());
  };
}

/**
 * A Node.js server running the relay: HTTP, or HTTPS with `tls`. Call `listen` yourself.
 *
 * @example
 * import { createRelay } from '@payhook/relay';
 * import { FileJournal } from '@payhook/relay/file';
 * import { createRelayServer } from '@payhook/relay/node';
 * const relay = createRelay({ journal: await FileJournal.open({ directory: './relay-data' }), signingSecret });
 * createRelayServer(relay).listen(8443);
 */
export function createRelayServer(relay: Relay, options?: RelayServerOptions): Server {
  const listener = createRelayListener(relay);
  const server = options?.tls ? createHttpsServer(options.tls, listener) : createHttpServer(listener);
  // Streams stay open for hours: no request or idle timeout on them; headers still must arrive in time.
  server.requestTimeout = 0;
  server.headersTimeout = 30_000;
  return server;
}
