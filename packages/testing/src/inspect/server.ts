import { randomBytes, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type { SignatureAlgorithm } from '@payhook/core';
import {
  InspectorRequestError,
  notificationToSend,
  type ReplayAnswer,
  replayTo,
  replayUrl,
  saveFixture,
  shellQuote,
  signedFor,
} from './actions.js';
import type { InspectedDelivery } from './deliveries.js';
import { deliveryDetail } from './detail.js';
import { type InspectorLedger, type LedgerReader, openLedger } from './ledger.js';
import { renderInspectorPage } from './page.js';
import { readScenarioRun, renderScenarioPage } from './scenario-page.js';
import {
  type DeliveryLog,
  type DeliverySource,
  followCapture,
  followFakeService,
  watchCapture,
} from './sources.js';

/**
 * What `payhook inspect` shows and what it may do.
 *
 * @example
 * const inspector = await startInspector({ capture: 'deliveries.jsonl', secret: 'test-secret', fixtures: 'test/fixtures' });
 * console.log(inspector.url); // http://127.0.0.1:…/?token=…
 */
export interface InspectorOptions {
  /** A capture file (core's `createCapture`), followed as it grows and across its rotations. */
  capture?: string;
  /** A running fake service (`payhook serve`) whose delivery attempts are shown, with its endpoints key. */
  fakeService?: { url: string; endpointsKey: string };
  /** The test secret replays are signed with; without it the page cannot replay. Never the live one. */
  secret?: string;
  /** @default 'sha256' */
  algorithm?: SignatureAlgorithm;
  /** The folder fixtures are saved in; without it the page cannot save. Nothing is written anywhere else. */
  fixtures?: string;
  /** The app's webhook URL, offered first: replays go only to its origin or to a loopback address. */
  target?: string;
  /** A scenario run as `payhook scenario run --report FILE` wrote it: shown at `/scenario`, read again on each visit. */
  scenario?: string;
  /** @default 0 (any free port) */
  port?: number;
  /** @default 10_000 */
  timeoutMs?: number;
  /**
   * The payment ledger (`@payhook/payments`) whose state and history the page shows beside a delivery's payment,
   * by its `order_id`: a store's URL, read only, or a ledger of your own.
   */
  ledger?: InspectorLedger;
}

/** A running inspector. */
export interface Inspector {
  /** The page's address with its token: whoever has it can drive the inspector. */
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
}

const MAX_REQUEST_BYTES = 8 * 1024 * 1024;
/** How often the sources are read, page open or not. */
const FOLLOW_MS = 1_000;

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
};

function send(res: ServerResponse, status: number, type: string, body: string, headers = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, ...headers });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new InspectorRequestError('send application/json');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) throw new InspectorRequestError('the request is over 8 MiB');
    chunks.push(chunk);
  }
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {}
  throw new InspectorRequestError('the request must be a JSON object');
}

function sameToken(given: string | null | undefined, token: string): boolean {
  if (typeof given !== 'string' || given.length !== token.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(token));
}

/**
 * Starts the inspector on 127.0.0.1: a page over captured and live deliveries that replays them (re-signed with
 * the test secret, optionally edited) and saves them as fixtures. Every request needs the random token of
 * `url`, and a `Host` of the loopback address, so no other local page or user can drive it.
 */
export async function startInspector(options: InspectorOptions): Promise<Inspector> {
  const token = randomBytes(24).toString('base64url');
  const sources: DeliverySource[] = [];
  if (options.capture !== undefined) sources.push(followCapture(options.capture));
  if (options.fakeService !== undefined) {
    sources.push(followFakeService(new URL(options.fakeService.url), options.fakeService.endpointsKey));
  }
  const log: DeliveryLog = { deliveries: [], unreadable: [] };
  const ledger = options.ledger === undefined ? undefined : await openLedger(options.ledger);
  const context: RouteContext = { options, log, sources, ledger, errors: [], reading: Promise.resolve() };
  // Read on its own, page open or not, every second and as soon as the capture's folder changes: a rotation
  // deletes the `<path>.1` before it, so a file must be read before it is rotated a second time.
  let following = true;
  const follow = async () => {
    await refresh(context);
    if (following) timer = setTimeout(follow, FOLLOW_MS).unref();
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  void follow();
  let queued = false;
  const watcher =
    options.capture === undefined
      ? undefined
      : watchCapture(options.capture, () => {
          if (!following || queued) return;
          queued = true;
          context.reading = context.reading.then(() => {
            queued = false;
            return readSources(context);
          });
        });
  const server = createServer((req, res) => {
    route(req, res, context, token).catch((error: unknown) => {
      const known = error instanceof InspectorRequestError;
      if (!res.headersSent)
        sendJson(res, known ? 400 : 500, { error: known ? error.message : 'internal error' });
      else res.destroy();
    });
  });
  server.listen(options.port ?? 0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  context.hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    token,
    close: async () => {
      following = false;
      clearTimeout(timer);
      watcher?.close();
      await new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
      await context.reading;
      for (const source of sources) await source.close?.();
      await ledger?.close();
    },
  };
}

interface RouteContext {
  readonly options: InspectorOptions;
  readonly log: DeliveryLog;
  readonly sources: readonly DeliverySource[];
  readonly ledger: LedgerReader | undefined;
  errors: string[];
  reading: Promise<void>;
  hosts?: Set<string>;
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  context: RouteContext,
  token: string,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://inspector.invalid');
  const given = req.headers['x-payhook-token'] ?? url.searchParams.get('token');
  if (!context.hosts?.has(req.headers.host ?? '') || !sameToken(given as string | null, token)) {
    send(
      res,
      403,
      'text/plain; charset=utf-8',
      'Forbidden: open the address payhook inspect printed, with its token.\n',
    );
    return;
  }
  const method = req.method ?? 'GET';
  if (url.pathname === '/' && method === 'GET') {
    sendPage(res, context.options);
    return;
  }
  if (url.pathname === '/scenario' && method === 'GET' && context.options.scenario !== undefined) {
    await sendScenarioPage(res, context.options.scenario, token);
    return;
  }
  if (url.pathname === '/deliveries' && method === 'GET') {
    await refresh(context);
    sendJson(res, 200, deliveryList(context, url));
    return;
  }
  // What the page names by id must have been read: the first read may still be under way.
  await context.reading;
  if (url.pathname === '/delivery' && method === 'GET') {
    const delivery = deliveryById(context, Number(url.searchParams.get('id')));
    sendJson(res, 200, await deliveryDetail(context.log.deliveries, delivery, context.ledger));
    return;
  }
  if (url.pathname === '/replay' && method === 'POST') {
    sendJson(res, 200, { answers: await replay(context, await readJsonBody(req)) });
    return;
  }
  if (url.pathname === '/curl' && method === 'POST') {
    sendJson(res, 200, { command: await curlCommand(context, await readJsonBody(req)) });
    return;
  }
  if (url.pathname === '/fixture' && method === 'POST') {
    sendJson(res, 200, await fixture(context, await readJsonBody(req)));
    return;
  }
  sendJson(res, 404, { error: 'not found' });
}

/** The timeline page of a scenario run (`--scenario RUN`), or 404 with why it could not be read. */
async function sendScenarioPage(res: ServerResponse, file: string, token: string): Promise<void> {
  const run = await readScenarioRun(file).catch((error: Error) => error);
  if (run instanceof Error) {
    send(res, 404, 'text/plain; charset=utf-8', `${run.message}\n`);
    return;
  }
  const nonce = randomBytes(16).toString('base64');
  const csp = `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
  send(res, 200, 'text/html; charset=utf-8', renderScenarioPage(run, nonce, `/?token=${token}`), {
    'content-security-policy': csp,
  });
}

/** The page, its script and style allowed by a nonce of this answer alone. */
function sendPage(res: ServerResponse, options: InspectorOptions): void {
  const nonce = randomBytes(16).toString('base64');
  const csp = `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
  send(res, 200, 'text/html; charset=utf-8', renderInspectorPage(nonce, pageSettings(options)), {
    'content-security-policy': csp,
  });
}

/** `/deliveries?since=N`: the list's columns of the deliveries after the first N. */
function deliveryList(context: RouteContext, url: URL): Record<string, unknown> {
  const since = Math.max(0, Number.parseInt(url.searchParams.get('since') ?? '0', 10) || 0);
  return {
    // The list's columns only: a notification and an answer are sent when their delivery is opened.
    deliveries: context.log.deliveries
      .slice(since)
      .map(({ notification: _, answer: __, answerHeaders: ___, ...columns }) => columns),
    total: context.log.deliveries.length,
    // The first lines that could not be read and their count: a file of garbage must not make every answer huge.
    unreadable: context.log.unreadable.slice(0, 20),
    unreadableCount: context.log.unreadable.length,
    errors: context.errors,
  };
}

function pageSettings(options: InspectorOptions): Record<string, unknown> {
  return {
    canReplay: options.secret !== undefined,
    canSave: options.fixtures !== undefined,
    target: options.target ?? '',
    scenario: options.scenario !== undefined,
  };
}

/**
 * Reads what every source has new; a source that fails is reported on the page, the others still read. One read
 * at a time: two pages refreshing at once must not read the same bytes twice.
 */
function refresh(context: RouteContext): Promise<void> {
  context.reading = context.reading.then(() => readSources(context));
  return context.reading;
}

async function readSources(context: RouteContext): Promise<void> {
  const errors: string[] = [];
  for (const source of context.sources) {
    try {
      await source.read(context.log);
    } catch (error) {
      errors.push((error as Error).message);
    }
  }
  context.errors = errors;
}

function deliveryById(context: RouteContext, id: unknown) {
  const delivery = Number.isInteger(id) ? context.log.deliveries[id as number] : undefined;
  if (delivery === undefined) throw new InspectorRequestError(`no delivery ${JSON.stringify(id)}`);
  return delivery;
}

function secretOf(context: RouteContext, to: string): string {
  const { secret } = context.options;
  if (secret === undefined) {
    throw new InspectorRequestError(
      `start payhook inspect with --resign SECRET (the test secret) or PAYHOOK_SECRET to ${to}`,
    );
  }
  return secret;
}

/** The replay of one delivery as a shell command: curl posting it, signed with the test secret, to the URL given. */
async function curlCommand(context: RouteContext, body: Record<string, unknown>): Promise<string> {
  const secret = secretOf(context, 'copy as cURL (the command is signed with the test secret)');
  const url = replayUrl(body.url, context.options.target);
  const delivery = deliveryById(context, body.id);
  const signed = signedFor(
    delivery,
    notificationToSend(delivery, body.notification),
    secret,
    context.options.algorithm,
  );
  const headers = Object.entries(signed.headers as Record<string, string>).flatMap(([name, value]) => [
    '-H',
    shellQuote(`${name}: ${value}`),
  ]);
  return [
    'curl',
    '-sS',
    '-i',
    '-X',
    'POST',
    shellQuote(url.href),
    ...headers,
    '--data-raw',
    shellQuote(signed.body),
  ].join(' ');
}

async function replay(context: RouteContext, body: Record<string, unknown>) {
  const { algorithm, timeoutMs } = context.options;
  const secret = secretOf(context, 'replay');
  const url = replayUrl(body.url, context.options.target);
  const ids = Array.isArray(body.ids) ? body.ids : [];
  if (ids.length === 0) throw new InspectorRequestError('choose at least one delivery');
  if (body.notification !== undefined && ids.length !== 1) {
    throw new InspectorRequestError('an edited notification replays one delivery');
  }
  const target = { url, secret, timeoutMs: timeoutMs ?? 10_000, ...(algorithm ? { algorithm } : {}) };
  const answers: ReplayAnswer[] = [];
  for (const id of ids) {
    let sending: [InspectedDelivery, Record<string, unknown>];
    try {
      const delivery = deliveryById(context, id);
      sending = [delivery, notificationToSend(delivery, body.notification)];
    } catch (error) {
      // One delivery asked for: its refusal is the answer. In a batch, the others are still sent.
      if (!(error instanceof InspectorRequestError) || ids.length === 1) throw error;
      answers.push({ id: id as number, refused: error.message });
      continue;
    }
    answers.push(await replayTo(sending[0], sending[1], target));
  }
  return answers;
}

async function fixture(context: RouteContext, body: Record<string, unknown>) {
  const folder = context.options.fixtures;
  if (folder === undefined)
    throw new InspectorRequestError('start payhook inspect with --fixtures DIR to save fixtures');
  const delivery = deliveryById(context, body.id);
  const notification = notificationToSend(delivery, body.notification);
  const saved = await saveFixture(resolve(folder), String(body.name ?? ''), delivery, notification);
  return { folder: resolve(folder), files: saved.files };
}
