import { hmacSha256Hex } from '@payhook/core/adapter';
import { nonEmptyString } from '../option-checks.js';

/**
 * What a request signature may be computed over: the method, the path with its query exactly as sent (each
 * segment percent-encoded), and the body ('' for a GET).
 *
 * @example
 * const request: SignableRequest = { method: 'GET', path: '/api/v1/pos/…/orders/o-1/purchase?callback=true', body: '', apiKey };
 */
export interface SignableRequest {
  /** `GET` for the re-sends. */
  readonly method: string;
  /** Path and query, e.g. `/api/v1/pos/<pos_id>/orders/<order_id>/purchase?callback=true`. */
  readonly path: string;
  /** The body as sent; '' without one. */
  readonly body: string;
  /** `API_KEY`, as sent in `X-API-AUTH`. */
  readonly apiKey: string;
}

/**
 * Computes `<SIGNATURE>` of `X-API-AUTH: <authScheme>-HMAC-SHA256 <API_KEY>:<SIGNATURE>` (spec part 5 does not
 * show how).
 *
 * @example
 * const signRequest: RequestSigner = ({ method, path, body }) => myHmac(`${method}${path}${body}`);
 */
export type RequestSigner = (request: SignableRequest) => string | Promise<string>;

/**
 * The default request signature: HMAC-SHA256 keyed with the API secret over the raw body only, as lowercase hex,
 * as public merchant code signs its requests; a GET has no body, so its signature is the HMAC of the empty
 * string. The spec does not show the service's computation (see docs/assumptions.md): pass `signRequest` when
 * the service expects another. Synchronous with `node:crypto`; where the runtime has none (workerd without
 * `nodejs_compat`), Web Crypto's, answering a promise.
 *
 * @example
 * const signer = hmacRequestSigner(process.env.PAYMENT_API_SECRET!);
 * signer({ method: 'GET', path: '/api/v1/…', body: '', apiKey }); // '3f1c…' (64 hex digits)
 */
export function hmacRequestSigner(apiSecret: string): RequestSigner {
  nonEmptyString('apiSecret', apiSecret, false);
  const hmac = hmacSha256Hex(apiSecret);
  return ({ body }) => hmac(body);
}
