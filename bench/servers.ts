import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { type KeyFunction, MemoryStore, notificationKey } from '@payhook/core';
import { handWrittenMinimum } from './minimum.js';
import { SECRET } from './payload.js';

/** The HTTP rows, each a server a child process runs while the parent sends it load. */
export const HTTP_ROWS = [
  'node:http bare',
  'node:http + hand-written minimum',
  'node:http + payhook',
  'Express 5 bare',
  'Express 5 + hand-written minimum',
  'Express 5 + payhook',
  'Koa 3 bare',
  'Koa 3 + hand-written minimum',
  'Koa 3 + payhook',
  'node:http + @octokit/webhooks middleware',
] as const;

export type HttpRow = (typeof HTTP_ROWS)[number];

/** What a server did, for the parent to check that the row measured what it claims (no duplicates, no refusals). */
export interface ServerCounts {
  handled: number;
  refused: number;
  /** The server process's CPU time so far (user + system), in microseconds. */
  cpuMicros?: number;
}

const OK_BODY = '{"ok":true}';
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
const PATH = '/webhooks';

/**
 * The load generator repeats a few signed deliveries (http.ts), so payhook's rows key each request as new: the
 * default key plus a counter. The store then claims and commits every request, as it would for a stream of
 * distinct notifications, and never answers from its duplicate path.
 */
function uniqueKey(): KeyFunction {
  let count = 0;
  return (notification) => `${notificationKey(notification)}:${++count}`;
}

/** payhook's options in every payhook row: a fresh MemoryStore, the unique key, and the counts. */
function payhookOptions(counts: ServerCounts) {
  return {
    secret: SECRET,
    store: new MemoryStore(),
    key: uniqueKey(),
    handle: () => {
      counts.handled++;
    },
    onError: () => {
      counts.refused++;
    },
  };
}

/** The minimum a merchant writes by hand: a general form parser, then verify, decode and parse. */
function verifyForm(text: string): unknown {
  const form = new URLSearchParams(text);
  return handWrittenMinimum(form.get('data') ?? '', form.get('signature') ?? '', SECRET);
}

function readNodeBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function nodeRow(counts: ServerCounts, verify: boolean): RequestListener {
  return (request, response) => {
    readNodeBody(request).then((body) => {
      if (verify) {
        try {
          verifyForm(body.toString());
        } catch {
          counts.refused++;
          response.writeHead(401, JSON_TYPE).end('{"ok":false}');
          return;
        }
      }
      counts.handled++;
      response.writeHead(200, JSON_TYPE).end(OK_BODY);
    }, response.destroy.bind(response));
  };
}

// Each server process loads only its own row's framework (a child starts in a fraction of the time).
async function expressRow(
  counts: ServerCounts,
  variant: 'bare' | 'minimum' | 'payhook',
): Promise<RequestListener> {
  const { default: express } = await import('express');
  const { webhookMiddleware: expressWebhook } = await import('@payhook/express');
  const app = express();
  if (variant === 'payhook') {
    // Mounted first, as the adapter's README says: payhook reads the stream itself, no body parser runs.
    app.post(
      PATH,
      expressWebhook({
        ...payhookOptions(counts),
      }),
    );
    return app;
  }
  app.post(PATH, express.urlencoded({ extended: false }), (req, res) => {
    if (variant === 'minimum') {
      const form = req.body as { data?: string; signature?: string };
      try {
        handWrittenMinimum(form.data ?? '', form.signature ?? '', SECRET);
      } catch {
        counts.refused++;
        res.status(401).json({ ok: false });
        return;
      }
    }
    counts.handled++;
    res.json({ ok: true });
  });
  return app;
}

async function koaRow(
  counts: ServerCounts,
  variant: 'bare' | 'minimum' | 'payhook',
): Promise<RequestListener> {
  const { default: Koa } = await import('koa');
  const { default: getRawBody } = await import('raw-body');
  const { webhookMiddleware: koaWebhook } = await import('@payhook/koa');
  const app = new Koa();
  if (variant === 'payhook') {
    app.use(
      koaWebhook({
        ...payhookOptions(counts),
        path: PATH,
      }),
    );
    return app.callback();
  }
  app.use(async (ctx, next) => {
    if (ctx.method !== 'POST' || ctx.path !== PATH) return next();
    const text = await getRawBody(ctx.req, {
      length: ctx.get('content-length'),
      limit: '1mb',
      encoding: 'utf8',
    });
    if (variant === 'minimum') {
      try {
        verifyForm(text);
      } catch {
        counts.refused++;
        ctx.status = 401;
        ctx.body = { ok: false };
        return;
      }
    }
    counts.handled++;
    ctx.body = { ok: true };
  });
  return app.callback();
}

async function octokitRow(counts: ServerCounts): Promise<RequestListener> {
  const { createNodeMiddleware, Webhooks } = await import('@octokit/webhooks');
  const webhooks = new Webhooks({ secret: SECRET });
  webhooks.onAny(() => {
    counts.handled++;
  });
  webhooks.onError(() => {
    counts.refused++;
  });
  return createNodeMiddleware(webhooks, { path: PATH });
}

async function listenerFor(row: HttpRow, counts: ServerCounts): Promise<RequestListener> {
  switch (row) {
    case 'node:http bare':
      return nodeRow(counts, false);
    case 'node:http + hand-written minimum':
      return nodeRow(counts, true);
    case 'node:http + payhook': {
      const { createNodeListener, createWebhookHandler } = await import('@payhook/core');
      return createNodeListener(
        createWebhookHandler<IncomingMessage>({
          ...payhookOptions(counts),
        }),
      ) as RequestListener;
    }
    case 'Express 5 bare':
      return expressRow(counts, 'bare');
    case 'Express 5 + hand-written minimum':
      return expressRow(counts, 'minimum');
    case 'Express 5 + payhook':
      return expressRow(counts, 'payhook');
    case 'Koa 3 bare':
      return koaRow(counts, 'bare');
    case 'Koa 3 + hand-written minimum':
      return koaRow(counts, 'minimum');
    case 'Koa 3 + payhook':
      return koaRow(counts, 'payhook');
    case 'node:http + @octokit/webhooks middleware':
      return octokitRow(counts);
  }
}

/** Starts the row's server on an ephemeral loopback port. */
export async function startServer(row: HttpRow, counts: ServerCounts): Promise<Server> {
  const server = createServer({ keepAliveTimeout: 60_000 }, await listenerFor(row, counts));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}
