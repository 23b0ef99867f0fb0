import { asRelayError, json, refusalOf } from './answers.js';
import { requireAdmin, requireChannelToken, tokenHash } from './auth.js';
import { createChannel } from './channels.js';
import { cursorOf, type EgressContext, poll, status, stream } from './egress.js';
import { RelayError } from './errors.js';
import { type IngressContext, ingressContext, type RequestInfo, receive } from './ingress.js';
import { type RelayOptions, type ResolvedOptions, resolveOptions } from './options.js';
import { Wakeups } from './wakeups.js';
import { EventSigner } from './wire.js';

/**
 * The relay: a Fetch handler for any runtime (Node.js through `@payhook/relay/node`, Bun, Deno, a serverless
 * function), and `close` for the journal.
 *
 * @example
 * Deno.serve((request, info) => relay.fetch(request, { remoteAddress: info.remoteAddr.hostname }));
 */
export interface Relay {
  /** Answers one request: ingress, egress, channel creation or health. */
  fetch(request: Request, info?: RequestInfo): Promise<Response>;
  /** Closes the journal. */
  close(): Promise<void>;
}

interface Routes {
  readonly options: ResolvedOptions;
  readonly ingress: IngressContext;
  readonly egress: EgressContext;
  readonly adminHash: string | undefined;
}

/** `/in/<channel>`, `/out/<channel>[/events|/status]`, `/channels`, `/health`: the path's parts, or undefined. */
function routeOf(pathname: string): { kind: string; channel?: string } | undefined {
  const parts = pathname.split('/').slice(1);
  const [first, channel, rest, ...extra] = parts;
  if (extra.length > 0) return undefined;
  if (first === 'in' && channel && rest === undefined) return { kind: 'in', channel };
  if (first === 'out' && channel && rest === undefined) return { kind: 'stream', channel };
  if (first === 'out' && channel && (rest === 'events' || rest === 'status')) return { kind: rest, channel };
  if (first === 'channels' && channel === undefined) return { kind: 'channels' };
  if (first === 'health' && channel === undefined) return { kind: 'health' };
  return undefined;
}

async function route(routes: Routes, request: Request, info: RequestInfo | undefined): Promise<Response> {
  const url = new URL(request.url);
  const { basePath } = routes.options;
  const path = url.pathname.startsWith(`${basePath}/`) ? url.pathname.slice(basePath.length) : undefined;
  const target = path === undefined ? undefined : routeOf(path);
  if (target === undefined) throw new RelayError('route.not_found', 'no such route on this relay.');
  if (target.kind === 'health') return json(200, { ok: true });
  if (target.kind === 'in') return receive(routes.ingress, request, target.channel!, info);
  if (target.kind === 'channels') {
    await requireAdmin(request, routes.adminHash);
    return createChannel(routes.options, routes.egress.signer, request, url.origin);
  }
  if (request.method !== 'GET') {
    throw new RelayError('request.method_not_allowed', 'a channel is read with GET.', { allow: 'GET' });
  }
  const channel = (await requireChannelToken(request, routes.options.journal, target.channel!)).name;
  if (target.kind === 'status') return status(routes.egress, channel);
  if (target.kind === 'events') return poll(routes.egress, channel, url, request.signal);
  const after = cursorOf(request.headers.get('last-event-id') ?? url.searchParams.get('after'));
  return stream(routes.egress, channel, after, request.signal);
}

/**
 * Builds the relay. Its options are checked here, once (a `TypeError` names a bad one). Routes:
 * - `POST /in/<channel>`: the service's delivery; 200 only once the journal has it, else 503 (redelivered).
 * - `GET /out/<channel>`: the channel as Server-Sent Events from `Last-Event-ID`; `/events?after=N&wait=S`, the
 *   same as a long-poll; `/status`. Each read with the channel's token (401 without, 403 with another's).
 * - `POST /channels` `{"name"}` with the admin token: a channel, its token and key, shown once.
 * - `GET /health`.
 *
 * @example
 * import { createRelay, MemoryJournal } from '@payhook/relay';
 * const relay = createRelay({ journal: new MemoryJournal(), adminToken, signingSecret });
 * const response = await relay.fetch(new Request('http://relay.test/health'));
 */
export function createRelay(options: RelayOptions): Relay {
  const resolved = resolveOptions(options);
  const wakeups = new Wakeups();
  const signer = new EventSigner(resolved.signingSecret);
  const adminHash = resolved.adminToken === undefined ? undefined : tokenHash(resolved.adminToken);
  const egress: EgressContext = { options: resolved, wakeups, signer };
  const ingress = ingressContext(resolved, wakeups);
  return {
    async fetch(request, info) {
      try {
        const routes = { options: resolved, ingress, egress, adminHash: await adminHash };
        return await route(routes, request, info);
      } catch (error) {
        const refusal = asRelayError(error);
        if (refusal.status >= 500) {
          resolved.logger.error(`[@payhook/relay] ${refusal.code}: ${describe(error)}`);
        }
        return refusalOf(refusal);
      }
    },
    close: () => resolved.journal.close(),
  };
}

/** A failure's name and code for the log; never its message's payload (a driver may quote values). */
function describe(error: unknown): string {
  const cause = error instanceof RelayError ? error.cause : error;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return `${cause.name}${typeof code === 'string' ? ` ${code}` : ''}`;
  }
  return error instanceof RelayError ? error.message : typeof cause;
}
