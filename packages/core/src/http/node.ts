import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookHandler } from '../handler.js';
import { utf8Length } from '../runtime/utf8.js';
import type { WebhookResult } from './answers.js';
import type { WebhookRequest } from './request.js';

/**
 * Describes a Node.js request for the handler. `body` is whatever a framework already made of the body (raw
 * bytes, text, or a parsed object); without it, or when it is empty, the request stream itself is read.
 *
 * @example
 * const result = await webhook(toWebhookRequest(req, req.body), req);
 */
export function toWebhookRequest(request: IncomingMessage, body?: unknown): WebhookRequest {
  return {
    method: request.method,
    headers: request.headers,
    body,
    stream: request,
    remoteAddress: request.socket?.remoteAddress,
  };
}

/** Writes a handler result to a Node.js response (node:http, Express, Fastify's `reply.raw`). */
export function sendNodeResponse(response: ServerResponse, result: WebhookResult): void {
  // The length lets Node send head and body in one write; an object (not a flat list) keeps on-headers wrappers working.
  const headers: Record<string, string> = { 'content-length': String(utf8Length(result.body)) };
  for (const name in result.headers) headers[name] = result.headers[name]!;
  response.writeHead(result.status, headers);
  response.end(result.body);
}

/**
 * A `node:http` request listener over the handler: `http.createServer(createNodeListener(webhook))`. The
 * context passed to the application's handlers is the `IncomingMessage`.
 *
 * @example
 * const webhook = createWebhookHandler<IncomingMessage>({ secret, handle: (n) => console.log(n.status) });
 * http.createServer(createNodeListener(webhook)).listen(3000);
 */
export function createNodeListener(
  handler: WebhookHandler<IncomingMessage>,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  return (request, response) =>
    handler(toWebhookRequest(request), request)
      .then((result) => sendNodeResponse(response, result))
      // The handler always answers; only writing the answer can throw (a response already sent by the app).
      .catch(() => void response.destroy());
}
