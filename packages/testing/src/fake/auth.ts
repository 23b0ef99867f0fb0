import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { credentialsError, FakeServiceError } from './errors.js';
import type { FakeProject } from './projects.js';
import type { FakeService } from './service.js';

/**
 * `<WORD>-HMAC-SHA256 <API_KEY>:<hex>` or `<WORD> <API_KEY>:<API_SECRET>`: the spec writes the neutral `SVC` for the
 * service's own word, and public code sends both forms (docs/assumptions.md, "X-API-AUTH in the fake").
 */
const AUTH = /^(?:([A-Za-z0-9-]+)-HMAC-SHA256|([A-Za-z0-9-]+)) ([^\s:]+):(\S+)$/i;

/** `X-API-AUTH` taken apart. */
interface AuthHeader {
  /** The scheme word without `-HMAC-SHA256`. */
  word: string;
  /** `hmac`: `<WORD>-HMAC-SHA256 <key>:<hex>`; `secret`: `<WORD> <key>:<secret>`. */
  form: 'hmac' | 'secret';
  apiKey: string;
  /** What follows the key: the HMAC or the secret itself. */
  credential: string;
}

function parseAuthHeader(value: string): AuthHeader | undefined {
  const match = AUTH.exec(value);
  if (!match) return undefined;
  const form = match[1] !== undefined ? 'hmac' : 'secret';
  return { word: (match[1] ?? match[2])!, form, apiKey: match[3]!, credential: match[4]! };
}

/** Compares in constant time whatever the lengths: the digests of both sides have one length. */
function sameText(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * The hex HMACs the service could expect: over the raw body (`''` without one), as public code signs, and over
 * `METHOD\nPATH?QUERY\nBODY`, payhook's earlier default signer.
 */
function expectedHmacs(secret: string, method: string, path: string, body: string): string[] {
  const hmac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');
  return [hmac(body), hmac(`${method}\n${path}\n${body}`)];
}

function credentialMatches(
  header: AuthHeader,
  project: FakeProject,
  request: { method: string; path: string; body: string },
): boolean {
  if (header.form === 'secret') return sameText(header.credential, project.apiSecret);
  const sent = header.credential.toLowerCase();
  // Every candidate is compared, so the time taken does not say which one matched.
  return expectedHmacs(project.apiSecret, request.method, request.path, request.body)
    .map((expected) => sameText(sent, expected))
    .includes(true);
}

/**
 * One header's value. A header sent more than once arrives joined with `, ` (Node, fetch, nock): the same value
 * repeated (one integration adds `X-API-Auth` again on every call) is that value; different values are refused,
 * naming the header, never a silent 401.
 */
function single(name: string, value: string): string {
  const parts = value.split(/\s*,\s*/);
  if (parts.length === 1 || parts.every((part) => part === parts[0])) return parts[0]!;
  throw new FakeServiceError(
    'S-404',
    401,
    `${name} was sent ${parts.length} times with different values: send it once per request.`,
  );
}

/**
 * The endpoints key: `X-API-KEY`, or `?key=` when the header is missing (one integration sends both); both
 * sent and different is refused, naming them.
 */
function endpointsKeyOf(header: string | undefined, parameter: string | undefined): string {
  const key = header === undefined ? undefined : single('X-API-KEY', header);
  if (key !== undefined && parameter !== undefined && parameter !== key) {
    throw new FakeServiceError(
      'S-404',
      401,
      'X-API-KEY and the ?key= parameter differ: send one endpoints key.',
    );
  }
  return key ?? parameter ?? '';
}

/**
 * Checks `X-API-AUTH` and `X-API-KEY` and answers the caller's project: the API key and the endpoints key, the
 * scheme word when the fake is strict and has `authScheme`, then the HMAC or the secret against the project's API
 * secret, unless the test checks SIGNATURE itself (`verifyAuth`).
 * @throws {FakeServiceError} `S-404` (401) on any mismatch, the same answer whatever was wrong.
 */
export function authenticate(
  fake: FakeService,
  request: {
    method: string;
    path: string;
    body: string;
    auth: string;
    endpointsKey: string | undefined;
    keyParameter?: string | undefined;
  },
): FakeProject {
  const header = parseAuthHeader(single('X-API-AUTH', request.auth));
  const endpointsKey = endpointsKeyOf(request.endpointsKey, request.keyParameter);
  const project = header ? fake.projectByApiKey(header.apiKey) : undefined;
  if (!header || !project || !sameText(endpointsKey, project.endpointsKey)) throw credentialsError();
  if (fake.strict && fake.authScheme !== undefined && header.word !== fake.authScheme) {
    throw credentialsError();
  }
  if (fake.verifyAuth) {
    const check = {
      project,
      apiKey: header.apiKey,
      signature: header.credential,
      method: request.method,
      path: request.path,
      body: request.body,
    };
    if (!fake.verifyAuth(check)) throw credentialsError();
    return project;
  }
  if (!credentialMatches(header, project, request)) throw credentialsError();
  return project;
}
