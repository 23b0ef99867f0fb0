/**
 * Every refusal payhook answers, with the HTTP status it maps to. One table, so adapters never choose a status.
 * `docs/errors.md` has one section per code.
 */
export const ERROR_STATUS = {
  'request.method_not_allowed': 405,
  'sender.forbidden': 403,
  'relay.header_invalid': 401,
  'relay.signature_invalid': 401,
  'relay.body_mismatch': 401,
  'relay.header_stale': 401,
  'relay.body_unavailable': 500,
  'media_type.unsupported': 415,
  'payload.too_large': 413,
  'payload.timeout': 408,
  'payload.malformed': 400,
  'payload.field_missing': 400,
  'payload.field_repeated': 400,
  'body.consumed': 500,
  'signature.invalid': 401,
  'secret.not_found': 401,
  'secret.unavailable': 503,
  'data.encoding_invalid': 400,
  'data.json_invalid': 400,
  'data.not_object': 400,
  'notification.invalid': 400,
  'notification.in_flight': 409,
  'claim.lost': 503,
  'store.unavailable': 503,
  'queue.unavailable': 503,
  'handler.failed': 500,
  'handler.timeout': 503,
} as const;

/** A stable, dotted error code: match on it, never on the message. */
export type WebhookErrorCode = keyof typeof ERROR_STATUS;

/**
 * The base of every error payhook answers with. `code` is stable, `status` is the HTTP status core answers,
 * `expose` says whether the message is safe to send to the caller (it always is: messages never carry a secret,
 * a card token or a payload).
 *
 * @example
 * if (err instanceof WebhookError && err.code === 'signature.invalid') metrics.increment('webhook.forged');
 */
export class WebhookError extends Error {
  override readonly name: string = 'WebhookError';
  readonly code: WebhookErrorCode;
  readonly status: number;
  readonly expose = true;

  /** `options.source`: the package the message starts with, for packages built on core (`@payhook/payments`). */
  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown; source?: string }) {
    super(`[${options?.source ?? '@payhook/core'}] ${message}`, options);
    this.code = code;
    this.status = ERROR_STATUS[code];
  }

  /**
   * The headers its answer carries besides the JSON type: `Allow: POST` (405), `Connection: close` (408, 413),
   * `Retry-After: 1` (409, 503). Express, Koa and Fastify send an error's `headers` when it reaches their error
   * handling (`forwardErrors`), so the answer is the same there.
   */
  get headers(): Record<string, string> {
    if (this.status === 405) return { allow: 'POST' };
    if (this.status === 408 || this.status === 413) return { connection: 'close' };
    if (this.status === 409 || this.status === 503) return { 'retry-after': '1' };
    return {};
  }

  /** The short JSON reason sent to the caller. */
  toJSON(): { code: WebhookErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** The request itself is not a webhook delivery: wrong method, sender, media type, size, or envelope. */
export class RequestError extends WebhookError {
  override readonly name = 'RequestError';
}

/** The signature did not match any configured secret, or could not be checked. */
export class SignatureError extends WebhookError {
  override readonly name = 'SignatureError';
  /**
   * What most likely happened, when payhook can tell (`sha1`, `secret_whitespace`...: docs/errors.md lists each):
   * for the operator only; the answer to the sender is the same with or without it.
   */
  readonly hint: SignatureHint | undefined;

  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown; hint?: SignatureHint }) {
    super(code, message, options);
    this.hint = options?.hint;
  }
}

/** The signed `data` could not be decoded or does not describe a notification. */
export class PayloadError extends WebhookError {
  override readonly name = 'PayloadError';
  /** For `notification.invalid`: every missing or malformed field. */
  readonly fields: readonly string[];

  constructor(
    code: WebhookErrorCode,
    message: string,
    options?: { cause?: unknown; fields?: readonly string[] },
  ) {
    super(code, message, options);
    this.fields = options?.fields ?? [];
  }

  override toJSON(): { code: WebhookErrorCode; message: string; fields?: readonly string[] } {
    return this.fields.length > 0 ? { ...super.toJSON(), fields: this.fields } : super.toJSON();
  }
}

/** The duplicate store failed; nothing was marked processed, so the service's retry is safe. */
export class StoreError extends WebhookError {
  override readonly name = 'StoreError';
}

/** The application handler threw or rejected; the claim was released so the redelivery is handled. */
export class HandlerError extends WebhookError {
  override readonly name = 'HandlerError';
}

/**
 * What most likely happened to a delivery refused for its signature (docs/errors.md lists each). Told to the
 * operator (the log, `onError`'s error, the span), never to the sender, and never a reason to accept it.
 */
export type SignatureHint =
  | 'sha1'
  | 'sha1_length'
  | 'sha256'
  | 'sha256_length'
  | 'signature_whitespace'
  | 'data_whitespace'
  | 'data_percent_encoded'
  | 'data_reencoded'
  | 'data_altered_plus_space'
  | 'data_reserialised'
  | 'secret_whitespace'
  | 'secret_for_other_project';
