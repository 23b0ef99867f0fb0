import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Server as HttpsServer } from 'node:https';

const DEFERRING: unique symbol = Symbol.for('@payhook/core:deferContinue');

/**
 * Makes a `node:http` (or `https`) server answer `Expect: 100-continue` only once something reads the request's
 * body. Node otherwise sends `100 Continue` before any code runs, inviting the sender to upload a body that is
 * then refused; with this, what payhook refuses before reading (413 for a declared Content-Length over
 * `maxBodyBytes`, 405, 403, 415) is the first and only answer, and the body is never sent. Such requests then
 * reach the server's 'request' listeners as any other, so it fits every framework that runs on the server: an
 * Express or Koa app, Fastify's `app.server`, Nest's `app.getHttpServer()`. Calling it twice changes nothing.
 *
 * @example
 * deferContinue(http.createServer(createNodeListener(webhook))).listen(3000);
 * deferContinue(app.listen(3000)); // Express, Koa
 */
export function deferContinue<S extends Server | HttpsServer>(server: S): S {
  const marked = server as S & { [DEFERRING]?: true };
  if (marked[DEFERRING]) return server;
  marked[DEFERRING] = true;
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    continueOnRead(request, response);
    server.emit('request', request, response);
  });
  return server;
}

function continueOnRead(request: IncomingMessage, response: ServerResponse): void {
  const detach = () => {
    request.removeListener('resume', sendContinue);
    request.removeListener('newListener', onListener);
  };
  // Once the answer is out, reading the rest (Node drains it) must not put a `100 Continue` after it.
  const sendContinue = () => {
    detach();
    if (!response.headersSent) response.writeContinue();
  };
  // Flowing reads (`on('data')`, `pipe`, `resume`) emit 'resume'; paused ones (async iteration) add 'readable'.
  const onListener = (event: string | symbol) => {
    if (event === 'readable') sendContinue();
  };
  request.on('resume', sendContinue);
  request.on('newListener', onListener);
  response.once('close', detach);
}
