// The request as any framework describes it and the envelope read from its body: types only, below every file that
// reads a request (body, form, stream, sender, capture, the handler and the diagnostics).

/** The two fields of a delivery (spec 2.6), exactly as received. */
export interface Envelope {
  readonly data: string;
  readonly signature: string;
}

/** Header bags payhook reads: Node's `IncomingHttpHeaders`, a plain record, or a Fetch `Headers`. */
export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>> | Headers;

/** A body still to be read: a Node readable, a web `ReadableStream`, or any async iterable of bytes. */
export type BodyStream =
  | NodeJS.ReadableStream
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>;

export type MediaType = 'form' | 'json';

/** One incoming HTTP request, as any framework can describe it. */
export interface WebhookRequest {
  /** The HTTP method; only POST is accepted. */
  method?: string;
  headers: HeaderBag;
  /**
   * The body: raw bytes or text the framework kept, an object a body parser built, or a stream to read.
   * When it is absent or an empty object, `stream` is read instead.
   */
  body?: unknown;
  /** The request stream, read when `body` holds nothing (no body parser ran, or one for another type). */
  stream?: BodyStream;
  /** The peer address of the socket, for `allowedSenders`. */
  remoteAddress?: string;
}
