import {
  createReconciler,
  type PendingOrder,
  type ReconcileResult,
  type RequestSigner,
} from '@payhook/payments';
import {
  apiKeysFrom,
  authSchemeFrom,
  httpUrlFrom,
  positiveInteger,
  readInput,
  requiredOption,
  UsageError,
} from './args.js';
import { defineCommand } from './command.js';
import { printable } from './io.js';

const RECONCILE_HELP = `Usage: payhook reconcile --base-url URL --pos-id ID --api-key KEY --endpoints-key KEY [--orders FILE]

Asks the payment service (or 'payhook serve') to deliver again the webhook of every order named, one line per
order: 'order_id [operation [transaction_id]]' (operation defaults to purchase; a transaction_id names one
charge of a recurring payment, spec 4.4). Lines are read from --orders FILE or standard input; blank lines and
lines starting with # are skipped. Prints one line per order and a summary; exits 1 when any order failed.

Options:
  --base-url URL        the service's {base_url} (http or https)
  --pos-id ID           the project (pos_id)
  --orders FILE         the orders, one per line ('-' or absent: standard input)
  --api-key K           X-API-AUTH's API_KEY (or PAYHOOK_API_KEY)
  --endpoints-key E     X-API-KEY (or PAYHOOK_ENDPOINTS_KEY)
  PAYHOOK_API_SECRET    (environment) the secret of the default request signature, HMAC-SHA256 of the body
                        (a re-send GET has none: the HMAC of the empty string)
  --signature S         a fixed X-API-AUTH SIGNATURE instead (or PAYHOOK_API_SIGNATURE; 'payhook serve'
                        accepts any)
  --auth-scheme WORD    X-API-AUTH's scheme word, sent as WORD-HMAC-SHA256 (or PAYHOOK_AUTH_SCHEME); default
                        SVC, the spec's stand-in: set your service's own word
  --concurrency N       re-sends under way at once (default 4)
  --rate N              re-sends started per second (default 5)
  --timeout MS          per call (default 10000)
  -h, --help            this help

Example:
  printf 'order-1\\norder-2 refund\\nsub-1 purchase 9b2f…\\n' | PAYHOOK_API_SECRET=… payhook reconcile \\
    --base-url http://127.0.0.1:8910 --pos-id 5f0c… --api-key ak_… --endpoints-key ek_…`;

const WORD = /^[a-z][a-z0-9_]*$/i;

/** The orders of `text`: `order_id [operation [transaction_id]]` a line. */
function ordersFrom(text: string): PendingOrder[] {
  const orders: PendingOrder[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const [orderId, operation = 'purchase', transactionId, extra] = trimmed.split(/\s+/);
    if (extra !== undefined || !WORD.test(operation)) {
      throw new UsageError(
        `line ${index + 1}: expected 'order_id [operation [transaction_id]]' with a word for operation.`,
      );
    }
    orders.push({ orderId: orderId!, operation, ...(transactionId ? { transactionId } : {}) });
  }
  return orders;
}

function describe(result: ReconcileResult): string {
  const { orderId, operation = 'purchase', transactionId } = result.order;
  const what = `${orderId} ${operation}${transactionId ? ` ${transactionId}` : ''}`;
  const status = result.paymentStatus ? ` (payment ${result.paymentStatus})` : '';
  return printable(`${what}: ${result.status}${status}${result.reason ? ` — ${result.reason}` : ''}`);
}

/**
 * `payhook reconcile`: asks the service to re-send the webhook of every order read (spec 4.3, 4.4), with the
 * reconciler of `@payhook/payments`; the merchant's `server_url` receives them.
 *
 * @example
 * const code = await reconcileCommand(['--base-url', url, '--pos-id', posId, '--orders', 'orders.txt'], processIO());
 */
export const reconcileCommand = defineCommand({
  help: RECONCILE_HELP,
  options: {
    text: 'base-url pos-id orders api-key endpoints-key signature auth-scheme concurrency rate timeout',
  },
  run: async ({ values }, io) => {
    const base = httpUrlFrom('--base-url', values['base-url']);
    const posId = requiredOption('pos-id', values['pos-id']);
    const { apiKey, endpointsKey } = apiKeysFrom(values, io);
    const authScheme = authSchemeFrom(values['auth-scheme'], io);
    const signer = signerFrom(values.signature ?? io.env.PAYHOOK_API_SIGNATURE, io.env.PAYHOOK_API_SECRET);
    const concurrency = positiveInteger('--concurrency', values.concurrency, 4);
    const rate = positiveInteger('--rate', values.rate, 5);
    const timeoutMs = positiveInteger('--timeout', values.timeout, 10_000);
    const orders = ordersFrom(await readInput(values.orders, io, 'the orders'));
    if (orders.length === 0) throw new UsageError('no orders: one order_id per line.');

    const reconciler = createReconciler({
      api: { baseUrl: base.href, posId, apiKey, endpointsKey, ...signer, timeoutMs, authScheme },
      listPending: () => orders,
      concurrency,
      requestsPerSecond: rate,
      onResult: (result) => io.stdout(describe(result)),
    });
    const { counts } = await reconciler.run();
    io.stdout(
      `${orders.length} order(s): ${counts.requested + counts.applied} requested, ${counts.pending} still pending, ${counts.failed} failed.`,
    );
    return counts.failed > 0 ? 1 : 0;
  },
});

/**
 * A fixed signature (`--signature`), else the client's default signer keyed with PAYHOOK_API_SECRET (given as
 * `apiSecret`, so the client also keeps it out of what the service's errors echo).
 */
function signerFrom(
  signature: string | undefined,
  secret: string | undefined,
): { signRequest: RequestSigner } | { apiSecret: string } {
  if (signature !== undefined && signature !== '') {
    if (/\s/.test(signature)) throw new UsageError('--signature cannot contain whitespace.');
    return { signRequest: () => signature };
  }
  if (secret !== undefined && secret !== '') return { apiSecret: secret };
  throw new UsageError(
    'no request signature: set PAYHOOK_API_SECRET (HMAC-SHA256), or pass --signature S (or PAYHOOK_API_SIGNATURE).',
  );
}
