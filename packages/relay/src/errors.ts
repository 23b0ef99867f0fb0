/**
 * Every refusal the relay answers, and every failure its client reports, with its HTTP status. One table, as
 * core's `ERROR_STATUS`: a code never changes its status. `docs/relay.md` has a line per code.
 */
export const RELAY_ERROR_STATUS = {
  'request.method_not_allowed': 405,
  'request.malformed': 400,
  'route.not_found': 404,
  'channel.not_found': 404,
  'channel.exists': 409,
  'channel.name_invalid': 400,
  'admin.disabled': 403,
  'admin.token_invalid': 401,
  'token.missing': 401,
  'token.invalid': 401,
  'token.forbidden': 403,
  'sender.forbidden': 403,
  'signature.invalid': 401,
  'payload.too_large': 413,
  'payload.unreadable': 400,
  'cursor.invalid': 400,
  'journal.unavailable': 503,
  'journal.timeout': 503,
  'forward.header_invalid': 401,
  'forward.signature_invalid': 401,
  'forward.body_mismatch': 401,
  'relay.unreachable': 502,
  'relay.refused': 502,
} as const;

/** A stable, dotted code: match on it, never on the message. */
export type RelayErrorCode = keyof typeof RELAY_ERROR_STATUS;

/**
 * The one error class of `@payhook/relay`. `code` is stable, `status` is the HTTP status the relay answers with
 * (or, for the client's codes, the status a proxy would). Messages never hold a token, a key or a body.
 *
 * @example
 * try {
 *   await verifyRelayHeader(request.headers.get('x-payhook-relay'), body, key);
 * } catch (error) {
 *   if (error instanceof RelayError) return new Response(error.code, { status: error.status });
 * }
 */
export class RelayError extends Error {
  override readonly name = 'RelayError';
  readonly code: RelayErrorCode;
  readonly status: number;
  /** For `request.method_not_allowed`: the methods the route takes. */
  readonly allow: string | undefined;

  constructor(code: RelayErrorCode, message: string, options?: { cause?: unknown; allow?: string }) {
    super(`[@payhook/relay] ${message}`, options);
    this.code = code;
    this.status = RELAY_ERROR_STATUS[code];
    this.allow = options?.allow;
  }

  /** The headers its answer carries: `Allow` for 405, `Retry-After: 1` for 503. */
  get headers(): Record<string, string> {
    if (this.status === 405) return { allow: this.allow ?? 'POST' };
    if (this.status === 503) return { 'retry-after': '1' };
    return {};
  }

  /** The short JSON reason sent to the caller. */
  toJSON(): { code: RelayErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}
