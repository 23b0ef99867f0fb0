import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookError } from '@payhook/core';
import {
  createMiddleware,
  sendNodeResponse,
  toWebhookRequest,
  type WebhookMiddleware,
} from '@payhook/core/adapter';
import { DEFAULT_PATH, type NestWebhookContext, type PayhookModuleOptions } from './options.js';

/** A connect-style middleware, what both of Nest's HTTP adapters take in `use()`. */
export type NodeMiddleware = (
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void,
) => void;

/** Where a refusal waits, with `forwardErrors`, for the Nest middleware that throws it to the exception filters. */
const REFUSAL: unique symbol = Symbol.for('@payhook/nestjs:refusal');

interface NestRequest extends IncomingMessage {
  originalUrl?: string;
  body?: unknown;
  [REFUSAL]?: WebhookError;
}

function pathnameOf(req: NestRequest): string {
  const url = req.originalUrl ?? req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Core's middleware over the Node request and response, mounted on the HTTP adapter before Nest's body parsers
 * (so it reads the body itself, as core does with none in front). A body something else kept or parsed first
 * (an app's own Express instance with its parsers, `rawBody: true`) is still read, as the Express adapter does.
 */
export function nestMiddleware(
  options: PayhookModuleOptions,
): WebhookMiddleware<NodeMiddleware, NestWebhookContext> {
  return createMiddleware<NestWebhookContext, NodeMiddleware>(
    { ...options, path: options.path ?? DEFAULT_PATH },
    (webhook, forwardErrors, handles) => (req: NestRequest, res, next) => {
      if (!handles(pathnameOf(req))) return next();
      webhook(toWebhookRequest(req, (req as { rawBody?: unknown }).rawBody ?? req.body), req)
        .then((result) => {
          if (!forwardErrors || !result.error) return sendNodeResponse(res, result);
          req[REFUSAL] = result.error;
          // The request goes on only so that Nest's exception layer gets the refusal: what is left of its body is
          // hidden from Nest's Express body parsers after this, which would read it and refuse a large one themselves.
          if (!req.complete) {
            delete req.headers['content-length'];
            delete req.headers['transfer-encoding'];
          }
          next();
        })
        .catch(next);
    },
  );
}

/**
 * Throws the refusal `nestMiddleware` left on the request, from inside Nest's middleware, whose exceptions go to
 * the app's exception filters (`@Catch(WebhookError)`).
 */
export function throwRefusal(req: NestRequest, _res: unknown, next: () => void): void {
  const refusal = req[REFUSAL];
  if (refusal) throw refusal;
  next();
}
