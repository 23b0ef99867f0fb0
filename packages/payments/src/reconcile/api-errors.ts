/** A stable code per way a call to the service's API fails: match on it, never on the message. */
export type ApiErrorCode =
  | 'api.network'
  | 'api.timeout'
  | 'api.unauthorized'
  | 'api.not_found'
  | 'api.refused'
  | 'api.server'
  | 'api.answer_invalid'
  | 'api.answer_mismatch'
  | 'api.answer_too_large'
  | 'api.request_invalid'
  | 'api.insecure_transport'
  | 'api.order_exists'
  | 'api.amount_exceeded';

/**
 * One field a payment request broke: its path (`amount`, `split[1].amount`, `cc_number`) and the rule's stable
 * code (`amount.invalid`, `card.luhn`), never the value.
 *
 * @example
 * const fields = error.violations?.map((v: ApiViolation) => v.field);
 */
export interface ApiViolation {
  readonly field: string;
  readonly code: string;
}

/**
 * A call to the service's API that failed. `status` is the HTTP status the service answered (absent when it did
 * not answer); `serviceCode` and `serviceMessage` come from its error body `{"message","args":{"code"}}`. The
 * message names the call (method and path: pos_id and order_id) and never a key, a signature or a record: what the
 * service said passes through a redaction of every configured credential and anything shaped like an auth header.
 *
 * @example
 * if (error instanceof ApiError && error.code === 'api.not_found') markUnknown(order);
 */
export class ApiError extends Error {
  override readonly name: string = 'ApiError';
  /** Stable: match on it, never on the message. */
  readonly code: ApiErrorCode;
  /** The HTTP status the service answered; `undefined` when it did not answer. */
  readonly status: number | undefined;
  /** `args.code` of the service's error body (`S-404`), when it sent one. */
  readonly serviceCode: string | undefined;
  /** `message` of the service's error body, credentials redacted, cut to 200 characters. */
  readonly serviceMessage: string | undefined;
  /**
   * Every field a create request broke, found by the client before sending (`api.request_invalid`, no `status`)
   * or listed by the service's `V-400` body (`status` 400).
   */
  readonly violations: readonly ApiViolation[] | undefined;

  constructor(
    code: ApiErrorCode,
    message: string,
    options?: {
      cause?: unknown;
      status?: number;
      serviceCode?: string;
      serviceMessage?: string;
      violations?: readonly ApiViolation[];
    },
  ) {
    super(
      `[@payhook/payments] ${message}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.code = code;
    this.status = options?.status;
    this.serviceCode = options?.serviceCode;
    this.serviceMessage = options?.serviceMessage;
    this.violations = options?.violations;
  }
}
