import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADMIN_PREFIX, handleAdminRequest } from './fake/admin.js';
import { handleApiRequest } from './fake/api.js';
import { FakeService } from './fake/service.js';
import type { FakeServiceOptions } from './fake/types.js';

/**
 * Options of `startFakeServer`: the engine's options (its `baseUrl` is the server's) plus the port.
 *
 * @example
 * await startFakeServer({ port: 8910, secret: 'whsec', realTime: true });
 */
export interface FakeServerOptions extends Omit<FakeServiceOptions, 'baseUrl'> {
  /** @default 0 (an ephemeral port) */
  port?: number;
  /**
   * Move the fake clock with the wall clock (once a second), so subscriptions charge in real time. Off in tests,
   * which move the clock themselves.
   * @default false
   */
  realTime?: boolean;
}

/**
 * A running fake payment service.
 *
 * @example
 * const server: FakeServer = await startFakeServer({ secret });
 * await server.close();
 */
export interface FakeServer {
  readonly fake: FakeService;
  /** `http://127.0.0.1:<port>`: the service's `{base_url}`. */
  readonly url: string;
  readonly port: number;
  /**
   * Throws (as `mockPaymentApi`'s `done()`) when a webhook sent so far was not acknowledged (unless failed
   * deliveries are expected) or one sent for the first time was answered `duplicate` (a store that remembers an
   * earlier run's ids), listing each with its cause and the fix.
   */
  done(options?: { expectFailedDeliveries?: boolean }): void;
  /** Stops listening, drops open connections and the real-time ticker. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1024 * 1024;

function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () =>
      resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')),
    );
    request.on('error', reject);
  });
}

/**
 * Runs the fake payment service as a real HTTP server on 127.0.0.1, over the same engine as `mockPaymentApi`:
 * the API of spec part 4 and the hosted checkout and 3DS pages, with `{base_url}` = `http://127.0.0.1:<port>`.
 * For end-to-end tests, browsers, and clients in any language; the admin routes under `/__payhook/` (listed in
 * the package README) move the test clock, list deliveries, and capture, void, refund or cancel.
 *
 * @example
 * const server = await startFakeServer({ secret: 'whsec', seed: 1 });
 * console.log(server.url, server.fake.project.apiKey);
 * await server.close();
 */
export async function startFakeServer(options: FakeServerOptions = {}): Promise<FakeServer> {
  const state: ServerState = { fake: undefined, ahead: 0 };
  const server: Server = createServer((request, response) => answer(state, request, response));
  await listen(server, options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const engine = new FakeService({ ...options, baseUrl: url });
  state.fake = engine;
  const ticker = options.realTime ? tickRealTime(engine, state) : undefined;
  return {
    fake: engine,
    url,
    port,
    done(check) {
      const list = [
        ...(check?.expectFailedDeliveries ? [] : engine.outbox.undelivered()),
        ...engine.outbox.unexpectedDuplicates(),
      ];
      if (list.length > 0) throw new Error(`[@payhook/testing] fake payment server: ${list.join('; ')}.`);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (ticker) clearInterval(ticker);
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The engine behind a server (made once it listens: its `baseUrl` holds the port), and the admin's clock lead. */
interface ServerState {
  fake: FakeService | undefined;
  /** How far an admin move put the fake clock ahead of real time (ms). */
  ahead: number;
}

/** Answers one request: an admin route under `/__payhook/`, else the service's API and pages. */
async function answer(state: ServerState, request: IncomingMessage, response: ServerResponse): Promise<void> {
  try {
    const body = await readBody(request);
    if (body === undefined) {
      response.writeHead(413, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
      response.end(JSON.stringify({ message: 'The body is too large.', args: { code: 'R-413' } }));
      return;
    }
    const apiRequest = {
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      headers: request.headers,
      body,
    };
    const fake = state.fake!;
    const admin = apiRequest.url === ADMIN_PREFIX || apiRequest.url.startsWith(`${ADMIN_PREFIX}/`);
    const answer = admin ? await handleAdminRequest(fake, apiRequest) : handleApiRequest(fake, apiRequest);
    // An admin move of the clock shifts real time too: the ticker keeps the fake clock that far ahead.
    if (admin) state.ahead = Math.max(state.ahead, fake.clock.now().getTime() - Date.now());
    response.writeHead(answer.status, answer.headers);
    response.end(answer.body);
  } catch {
    response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify({ message: 'The fake service failed.', args: { code: 'S-500' } }));
  }
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Moves the fake clock with the wall clock once a second, kept `state.ahead` in front of it. */
function tickRealTime(engine: FakeService, state: ServerState): NodeJS.Timeout {
  const ticker = setInterval(() => {
    void engine.clock
      .advanceTo(Math.max(Date.now() + state.ahead, engine.clock.now().getTime()))
      .catch(() => undefined);
  }, 1000);
  ticker.unref();
  return ticker;
}
