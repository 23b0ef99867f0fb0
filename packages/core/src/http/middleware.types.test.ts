import type { IncomingMessage, RequestListener } from 'node:http';
import { describe, expectTypeOf, it } from 'vitest';
import type { WebhookHandler } from '../handler.js';
import type { WebhookMiddleware } from './middleware.js';

// Types only: `pnpm typecheck` fails when an adapter's `.on` or `.onAny` no longer takes what the core handler's take
// (the per-handler `{ inline: true }` was once a TS2554 on every adapter).
describe("WebhookMiddleware: .on and .onAny take the core handler's arguments", () => {
  type Middleware = WebhookMiddleware<RequestListener, IncomingMessage>;
  type Handler = WebhookHandler<IncomingMessage>;

  it('takes the event, the handler and the per-handler options, as the core handler', () => {
    expectTypeOf<Parameters<Middleware['on']>>().toEqualTypeOf<Parameters<Handler['on']>>();
    expectTypeOf<Parameters<Middleware['onAny']>>().toEqualTypeOf<Parameters<Handler['onAny']>>();
  });

  it('chains: each returns the middleware', () => {
    expectTypeOf<ReturnType<Middleware['on']>>().toEqualTypeOf<Middleware>();
    expectTypeOf<ReturnType<Middleware['onAny']>>().toEqualTypeOf<Middleware>();
  });
});
