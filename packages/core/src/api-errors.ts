/** A stable code per way a call to the service's API fails: match on it, never on the message. */
export type ApiErrorCode =
  | 'api.network'
  | 'api.timeout'
  | 'api.unauthorized'
  | 'api.not_found'
  | 'api.refused'
  | 'api.server'
  | 'api.answer_invalid';

/**
 * A call to the service's API that failed. `status` is the HTTP status the service answered (absent when it did
 * not answer); `serviceCode` and `serviceMessage` come from its error body `{"message","args":{"code"}}`. The
 * message names the call (method and path: pos_id and order_id) and never a key, a signature or a record.
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
  /** `message` of the service's error body, cut to 200 characters. */
  readonly serviceMessage: string | undefined;

  constructor(
    code: ApiErrorCode,
    message: string,
    options?: { cause?: unknown; status?: number; serviceCode?: string; serviceMessage?: string },
  ) {
    super(`[@payhook/core] ${message}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options?.status;
    this.serviceCode = options?.serviceCode;
    this.serviceMessage = options?.serviceMessage;
  }
}

/**
 * The service could not be reached (DNS, refused connection, reset); `cause` holds fetch's error.
 *
 * @example
 * if (error instanceof ApiNetworkError) retryLater();
 */
export class ApiNetworkError extends ApiError {
  override readonly name = 'ApiNetworkError';
}

/**
 * The service did not answer within `timeoutMs`.
 *
 * @example
 * if (error instanceof ApiTimeoutError) retryLater();
 */
export class ApiTimeoutError extends ApiError {
  override readonly name = 'ApiTimeoutError';
}

/**
 * The service refused the credentials (401 or 403): the API key, endpoints key, request signature or pos_id.
 *
 * @example
 * if (error instanceof ApiAuthError) alertOps(error.serviceCode); // 'S-404'
 */
export class ApiAuthError extends ApiError {
  override readonly name = 'ApiAuthError';
}

/**
 * The service knows no such order, operation or transaction (404): asking again will not help.
 *
 * @example
 * if (error instanceof ApiNotFoundError) markUnknown(order);
 */
export class ApiNotFoundError extends ApiError {
  override readonly name = 'ApiNotFoundError';
}

/**
 * Any other 4xx (a malformed request, a rate limit): `status` says which.
 *
 * @example
 * if (error instanceof ApiRefusedError && error.status === 429) slowDown();
 */
export class ApiRefusedError extends ApiError {
  override readonly name = 'ApiRefusedError';
}

/**
 * The service failed (5xx): asking again later may help.
 *
 * @example
 * if (error instanceof ApiServerError) retryLater();
 */
export class ApiServerError extends ApiError {
  override readonly name = 'ApiServerError';
}

/**
 * A 2xx answer that cannot be used: not JSON where a record was expected, or the record of another order.
 *
 * @example
 * if (error instanceof ApiAnswerError) alertOps(error.message);
 */
export class ApiAnswerError extends ApiError {
  override readonly name = 'ApiAnswerError';
}
