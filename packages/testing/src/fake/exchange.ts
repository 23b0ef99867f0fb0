// One request to the fake service and its answer, as both transports (server.ts, nock.ts) describe them: types only,
// below the files that answer (api.ts, admin.ts, checkout-http.ts).

/**
 * One HTTP request to the fake service, as either transport describes it.
 *
 * @example
 * handleApiRequest(fake, { method: 'GET', url: '/api/v1/checkout/abc/form', headers: {}, body: '' });
 */
export interface ApiRequest {
  method: string;
  /** Path and query, e.g. `/api/v1/pos/…/orders/o-1/purchase?callback=true`. */
  url: string;
  headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** The body as received; '' without one. */
  body: string;
}

/**
 * The fake service's answer.
 *
 * @example
 * const { status, headers, body } = handleApiRequest(fake, request);
 */
export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}
