import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseNotification, type SignatureAlgorithm } from '@payhook/core';
import { post } from '../cli/post.js';
import { resign } from '../replay.js';
import { type InspectedDelivery, maskDelivered } from './deliveries.js';

/** A request from the page the inspector refuses: answered 400 with `message`. */
export class InspectorRequestError extends Error {
  override readonly name = 'InspectorRequestError';
}

/** A request the inspector sent, as the page shows it. */
interface SentRequest {
  readonly method: 'POST';
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What a replay answered, beside what the captured delivery was answered. */
export interface ReplayAnswer {
  readonly id: number;
  readonly status?: number;
  readonly outcome?: string;
  readonly code?: string;
  /** The answer's headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The answer's body, whole up to 1 MiB, masked as a notification is. */
  readonly body?: string;
  /** The request sent. */
  readonly request?: SentRequest;
  /** Why the request got no answer. */
  readonly error?: string;
  /** Why this delivery of a batch was not sent (the others were). */
  readonly refused?: string;
}

/**
 * The notification to send for a delivery: the edit made in the page, checked as the handler would parse it, or
 * the captured one.
 */
export function notificationToSend(delivery: InspectedDelivery, edit: unknown): Record<string, unknown> {
  // An "edit" that changed nothing is the captured notification: sent as it came, whether it parses or not.
  const edited = isDeepStrictEqual(edit, delivery.notification) ? undefined : edit;
  const chosen = edited ?? delivery.notification;
  if (typeof chosen !== 'object' || chosen === null || Array.isArray(chosen)) {
    throw new InspectorRequestError(
      edited === undefined
        ? `delivery ${delivery.id} has no notification (refused before its signature was verified): nothing to send`
        : 'the edited notification must be a JSON object',
    );
  }
  if (edited === undefined) return chosen as Record<string, unknown>;
  try {
    parseNotification(chosen as Record<string, unknown>);
  } catch (error) {
    throw new InspectorRequestError(
      `the edited notification is not one the service could send: ${(error as Error).message}`,
    );
  }
  return chosen as Record<string, unknown>;
}

/** A delivery's notification signed with the test secret, in the envelope it came in (form, or JSON). */
export function signedFor(
  delivery: InspectedDelivery,
  notification: Record<string, unknown>,
  secret: string,
  algorithm?: SignatureAlgorithm,
): ReturnType<typeof resign> {
  return resign(
    {
      v: 1,
      at: delivery.at,
      status: delivery.status ?? 0,
      outcome: 'handled',
      notification,
      ...contentTypeOf(delivery),
    },
    secret,
    algorithm,
  );
}

/** Posts a delivery to `url`, re-signed with the test secret in the envelope it came in. */
export async function replayTo(
  delivery: InspectedDelivery,
  notification: Record<string, unknown>,
  target: { url: URL; secret: string; algorithm?: SignatureAlgorithm; timeoutMs: number },
): Promise<ReplayAnswer> {
  const signed = signedFor(delivery, notification, target.secret, target.algorithm);
  const headers = signed.headers as Record<string, string>;
  const request: SentRequest = { method: 'POST', url: target.url.href, headers, body: signed.body };
  try {
    const answer = await post(target.url, headers, signed.body, target.timeoutMs);
    let parsed: { outcome?: unknown; error?: { code?: unknown } } = {};
    try {
      parsed = JSON.parse(answer.text);
    } catch {}
    return {
      id: delivery.id,
      status: answer.status,
      ...(typeof parsed.outcome === 'string' ? { outcome: parsed.outcome } : {}),
      ...(typeof parsed.error?.code === 'string' ? { code: parsed.error.code } : {}),
      headers: headerText(answer.headers),
      body: maskDelivered(answer.text) as string,
      request,
    };
  } catch (error) {
    return { id: delivery.id, error: (error as Error).message, request };
  }
}

function headerText(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) =>
      value === undefined ? [] : [[name, Array.isArray(value) ? value.join(', ') : value]],
    ),
  );
}

function contentTypeOf(delivery: InspectedDelivery): { contentType?: string } {
  return delivery.contentType === undefined ? {} : { contentType: delivery.contentType };
}

const FIXTURE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** The files a saved fixture is made of, relative to the fixtures folder. */
export interface SavedFixture {
  readonly files: readonly string[];
}

/**
 * Saves a delivery as a fixture in `folder` (the one the user named, nowhere else), each file readable by its
 * owner only (a fixture holds what a delivery held): `<name>.json` (the notification), `<name>.test.ts` (a test
 * that posts it with `postWebhook` to the app in `<root>/src/app.js`, signed with `PAYHOOK_SECRET`) and
 * `<name>.jsonl` (a capture line `payhook replay` and `replayDeliveries` read).
 */
export async function saveFixture(
  folder: string,
  name: string,
  delivery: InspectedDelivery,
  notification: Record<string, unknown>,
  root = process.cwd(),
): Promise<SavedFixture> {
  if (!FIXTURE_NAME.test(name)) {
    throw new InspectorRequestError(
      'a fixture name is 1 to 64 letters, digits, "-" or "_", starting with a letter or digit',
    );
  }
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const line = {
    v: 1,
    at: delivery.at,
    status: delivery.status ?? 200,
    outcome: delivery.outcome ?? 'handled',
    ...contentTypeOf(delivery),
    notification,
  };
  const files: [string, string][] = [
    [`${name}.json`, `${JSON.stringify(notification, null, 2)}\n`],
    [`${name}.jsonl`, `${JSON.stringify(line)}\n`],
    [`${name}.test.ts`, fixtureTest(name, delivery, appImport(folder, root))],
  ];
  // `wx`: never replace a file, and never follow a link planted where a fixture would go.
  try {
    for (const [file, text] of files) await writeFile(join(folder, file), text, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    throw new InspectorRequestError(
      `a fixture named ${name} exists already in the folder: choose another name`,
    );
  }
  return { files: [`${name}.json`, `${name}.jsonl`, `${name}.test.ts`] };
}

/** The app's module as the saved test imports it: `src/app.js` under the folder payhook inspect ran in. */
function appImport(folder: string, root: string): string {
  const path = relative(folder, resolve(root, 'src', 'app.js'))
    .split(sep)
    .join('/');
  return path.startsWith('.') ? path : `./${path}`;
}

function fixtureTest(name: string, delivery: InspectedDelivery, app: string): string {
  const what = [delivery.event, delivery.order === undefined ? '' : `order ${delivery.order}`]
    .filter(Boolean)
    .join(', ');
  return `import { readFileSync } from 'node:fs';
import { postWebhook } from '@payhook/testing';
import { it } from 'vitest';
import { app } from '${app.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'; // your app, with its webhook route at /webhooks

// The test secret your app verifies webhooks with under test (never the live one).
const secret = process.env.PAYHOOK_SECRET;
const notification = JSON.parse(readFileSync(new URL('./${name}.json', import.meta.url), 'utf8'));

it(${JSON.stringify(`handles the delivery saved as ${name} (${what})`)}, async () => {
  if (!secret) throw new Error('set PAYHOOK_SECRET to the test secret your app verifies webhooks with');
  (await postWebhook(app, notification, { secret })).expectHandled();
});
`;
}

/** `text` as one POSIX shell word: single-quoted, each `'` closed, escaped and reopened. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * Where a replay may go: the app given with `--target` (its origin), or a loopback address. The page holds a
 * token that can post signed requests and read their answers: it must not reach any other host.
 */
export function replayUrl(given: unknown, target: string | undefined): URL {
  let url: URL;
  try {
    url = new URL(String(given));
  } catch {
    throw new InspectorRequestError('the replay URL is not a URL');
  }
  const web = url.protocol === 'http:' || url.protocol === 'https:';
  const app = target === undefined ? undefined : new URL(target).origin;
  if (web && (url.origin === app || isLoopback(url.hostname))) return url;
  throw new InspectorRequestError(
    `replay goes only to the app given with --target${app === undefined ? '' : ` (${app})`} or to loopback (127.0.0.1, [::1], localhost), not to ${url.origin === 'null' ? url.protocol : url.origin}`,
  );
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}
