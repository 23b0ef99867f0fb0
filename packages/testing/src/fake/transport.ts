/**
 * What a webhook transport is asked to deliver: a form POST of `data` and `signature` to `url`.
 *
 * @example
 * const transport = async ({ url, data, signature }: WebhookMessage) => ({ status: 200, body: '' });
 */
export interface WebhookMessage {
  url: string;
  data: string;
  signature: string;
}

/**
 * The receiver's answer, or the transport's failure.
 *
 * @example
 * const answer: TransportAnswer = { status: 204, body: '' };
 */
export interface TransportAnswer {
  status: number;
  body: string;
  /** The answer's headers, names in lower case, when the transport reads them (`fetchTransport` does). */
  headers?: Readonly<Record<string, string>>;
}

/**
 * Delivers one webhook; rejects on a network failure.
 *
 * @example
 * const recorded: WebhookMessage[] = [];
 * const transport: WebhookTransport = async (m) => (recorded.push(m), { status: 200, body: '' });
 */
export type WebhookTransport = (message: WebhookMessage) => Promise<TransportAnswer>;

/**
 * The default transport: `fetch` POST as `application/x-www-form-urlencoded`, as the service sends (spec part 6).
 * A receiver that has not answered within 10 s counts as a failed attempt, so a hung server cannot stall the outbox.
 *
 * @example
 * const fake = new FakeService({ secret, transport: fetchTransport });
 */
export const fetchTransport: WebhookTransport = (message) => postForm(globalThis.fetch, message);

/** `fetchTransport` through another `fetch` (a scenario run's, which a test may give). */
export function fetchTransportOver(fetch: typeof globalThis.fetch): WebhookTransport {
  return (message) => postForm(fetch, message);
}

async function postForm(fetch: typeof globalThis.fetch, message: WebhookMessage): Promise<TransportAnswer> {
  const response = await fetch(message.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ data: message.data, signature: message.signature }).toString(),
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  return {
    status: response.status,
    body: await response.text(),
    headers: headersOf(response.headers),
  };
}

function headersOf(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** An error's message followed by its causes: fetch's `fetch failed` alone says nothing about why. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner =
    error instanceof AggregateError && error.errors.length > 0
      ? error.errors.map(describeError).join(', ')
      : error.cause !== undefined
        ? describeError(error.cause)
        : undefined;
  if (error.message === '') return inner ?? error.name;
  return inner === undefined ? error.message : `${error.message} (${inner})`;
}
