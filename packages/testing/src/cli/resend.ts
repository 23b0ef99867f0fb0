import { createRedactor, hmacRequestSigner } from '@payhook/payments';
import {
  apiKeysFrom,
  authSchemeFrom,
  httpUrlFrom,
  positiveInteger,
  requiredOption,
  UsageError,
} from './args.js';
import { defineCommand, type OptionValues } from './command.js';
import { type CliIO, printable } from './io.js';
import { httpCall, noAnswer } from './post.js';

const RESEND_HELP = `Usage: payhook resend --base-url URL --pos-id ID --order ORDER [--operation OP] [--transaction-id T]

Asks the payment service (or 'payhook serve') to deliver an operation's webhook again, as spec 4.3 and 4.4:
  GET {base_url}/api/v1/pos/<pos_id>/orders/<order_id>/<operation>?callback=true[&transactionId=T]
Prints the status and the record answered. Exits 0 on a 2xx answer, 1 otherwise.

Options:
  --base-url URL        the service's {base_url} (http or https)
  --pos-id ID           the project (pos_id)
  --order ORDER         the merchant's order_id
  --operation OP        purchase (default), auth, capture, void, refund, …
  --transaction-id T    one charge of a recurring payment (4.4); without it, the latest
  --api-key K           X-API-AUTH's API_KEY (or PAYHOOK_API_KEY)
  --endpoints-key E     X-API-KEY (or PAYHOOK_ENDPOINTS_KEY)
  PAYHOOK_API_SECRET    (environment) the secret of the default signature: HMAC-SHA256 of the body, which a
                        GET does not have (the HMAC of the empty string)
  --signature S         a fixed X-API-AUTH SIGNATURE instead (or PAYHOOK_API_SIGNATURE): the spec does not
                        show its computation
  --auth-scheme WORD    X-API-AUTH's scheme word, sent as WORD-HMAC-SHA256 (or PAYHOOK_AUTH_SCHEME); default
                        SVC, the spec's stand-in: set your service's own word
  --timeout MS          default 10000
  -h, --help            this help

Example:
  payhook resend --base-url http://127.0.0.1:8910 --pos-id 5f0c… --order order-1 --api-key ak_… --endpoints-key ek_… --signature x`;

/** The options of `payhook resend`. */
const RESEND_OPTIONS = {
  text: 'base-url pos-id order operation transaction-id api-key endpoints-key signature auth-scheme timeout',
} as const;

type ResendValues = OptionValues<typeof RESEND_OPTIONS>;

/** The API credentials a re-send request carries: every one is redacted from what is printed. */
interface ResendAuth {
  apiKey: string;
  endpointsKey: string;
  signature: string;
  headers: Record<string, string>;
}

/**
 * `payhook resend`: the re-send request of spec 4.3 (an operation) and 4.4 (a recurring charge by
 * `transactionId`) against a live service or `payhook serve`.
 *
 * @example
 * const code = await resendCommand(['--base-url', url, '--pos-id', posId, '--order', 'o-1'], processIO());
 */
export const resendCommand = defineCommand({
  help: RESEND_HELP,
  options: RESEND_OPTIONS,
  run: async ({ values }, io) => {
    const base = httpUrlFrom('--base-url', values['base-url']);
    const posId = requiredOption('pos-id', values['pos-id']);
    const order = requiredOption('order', values.order);
    if (order === '.' || order === '..') {
      throw new UsageError(
        `--order ${order} cannot be sent: URL normalisation removes a '.' or '..' path segment.`,
      );
    }
    const operation = values.operation ?? 'purchase';
    if (!/^[a-z0-9_-]+$/i.test(operation))
      throw new UsageError('--operation must be a word such as purchase.');
    const auth = await resendAuthFrom(values, io);
    const timeout = positiveInteger('--timeout', values.timeout, 10_000);
    const path = `api/v1/pos/${encodeURIComponent(posId)}/orders/${encodeURIComponent(order)}/${operation}`;
    const url = new URL(path, base.href.endsWith('/') ? base.href : `${base.href}/`);
    url.searchParams.set('callback', 'true');
    if (values['transaction-id'] !== undefined)
      url.searchParams.set('transactionId', values['transaction-id']);
    return requestResend(url, auth, timeout, io);
  },
});

/** The keys, the signature and the headers that carry them (X-API-AUTH, X-API-KEY). */
async function resendAuthFrom(values: ResendValues, io: CliIO): Promise<ResendAuth> {
  const { apiKey, endpointsKey } = apiKeysFrom(values, io);
  const scheme = authSchemeFrom(values['auth-scheme'], io);
  const signature = await signatureFrom(
    values.signature ?? io.env.PAYHOOK_API_SIGNATURE,
    io.env.PAYHOOK_API_SECRET,
  );
  const headers = {
    'x-api-auth': `${/-HMAC-SHA256$/i.test(scheme) ? scheme : `${scheme}-HMAC-SHA256`} ${apiKey}:${signature}`,
    'x-api-key': endpointsKey,
    accept: 'application/json',
  };
  return { apiKey, endpointsKey, signature, headers };
}

/** Sends the GET and prints its status and answer: 0 on a 2xx, 1 otherwise or without an answer. */
async function requestResend(url: URL, auth: ResendAuth, timeout: number, io: CliIO): Promise<number> {
  io.stdout(`GET ${url.href}`);
  let answer: { status: number; text: string };
  try {
    answer = await httpCall('GET', url, auth.headers, undefined, timeout);
  } catch (error) {
    io.stderr(noAnswer(error));
    return 1;
  }
  // The service's answer may echo the request's credentials: none of them is printed.
  const { apiKey, endpointsKey, signature } = auth;
  const redact = createRedactor([apiKey, endpointsKey, signature, io.env.PAYHOOK_API_SECRET]);
  io.stdout(`${answer.status} ${printable(redact(answer.text))}`);
  return answer.status >= 200 && answer.status < 300 ? 0 : 1;
}

/** A fixed signature, else the default one keyed with the secret: a GET's body is empty. */
async function signatureFrom(signature: string | undefined, secret: string | undefined): Promise<string> {
  if (signature !== undefined && signature !== '') return signature;
  if (secret !== undefined && secret !== '') {
    return hmacRequestSigner(secret)({ method: 'GET', path: '', body: '', apiKey: '' });
  }
  throw new UsageError(
    'no request signature: set PAYHOOK_API_SECRET (HMAC-SHA256), or pass --signature S (or PAYHOOK_API_SIGNATURE).',
  );
}
