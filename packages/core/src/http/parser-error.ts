import { RequestError, type WebhookErrorCode } from '../errors.js';

/** `type`s of the errors raw-body, body-parser and co-body throw, as core's codes. */
const PARSER_ERROR_CODES: Readonly<Record<string, WebhookErrorCode>> = {
  'entity.too.large': 'payload.too_large',
  'parameters.too.many': 'payload.too_large',
  'entity.parse.failed': 'payload.malformed',
  'request.aborted': 'payload.malformed',
  'request.size.invalid': 'payload.malformed',
  'querystring.parse.rangeError': 'payload.malformed',
  'charset.unsupported': 'media_type.unsupported',
  'encoding.unsupported': 'media_type.unsupported',
};

/**
 * Translates the error of a body parser that ran before payhook and refused the request (Express's
 * body-parser, @koa/bodyparser, koa-body) into the refusal core answers for the same body, so a webhook gets the
 * same status and code whichever parser met it first. Returns `undefined` for any other error.
 *
 * @example
 * app.use('/webhooks', (err, req, res, next) => {
 *   const refused = fromParserError(err);
 *   refused ? sendNodeResponse(res, refusal(refused)) : next(err);
 * });
 */
export function fromParserError(error: unknown): RequestError | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { type, status, body } = error as { type?: unknown; status?: unknown; body?: unknown };
  // co-body rejects a body that is not JSON with a bare SyntaxError that carries the text as `body`.
  const code =
    typeof type === 'string'
      ? PARSER_ERROR_CODES[type]
      : error instanceof SyntaxError && status === 400 && typeof body === 'string'
        ? 'payload.malformed'
        : undefined;
  if (code === undefined) return undefined;
  return new RequestError(
    code,
    `a body parser mounted before payhook refused the body (${typeof type === 'string' ? type : 'invalid JSON'}); mount payhook first, or give that parser payhook's limits.`,
    // Not the parser's error itself: it carries the raw body (`body`), which a logger would print whole.
    { cause: { type: typeof type === 'string' ? type : 'entity.parse.failed', status } },
  );
}
