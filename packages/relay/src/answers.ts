import { RelayError } from './errors.js';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** A JSON answer. */
export function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_TYPE, ...headers } });
}

/** The answer to a refusal: its status, headers and `{ ok: false, error: { code, message } }`. */
export function refusalOf(error: RelayError): Response {
  return json(error.status, { ok: false, error: error.toJSON() }, error.headers);
}

/** Any error as a `RelayError`: an unexpected one is the journal's (503), its message kept out of the answer. */
export function asRelayError(error: unknown): RelayError {
  if (error instanceof RelayError) return error;
  return new RelayError('journal.unavailable', 'the journal failed: try again shortly.', { cause: error });
}
