import { ApiError, createApiClient, createRedactor, type SplitItem } from '@payhook/payments';
import {
  apiKeysFrom,
  authSchemeFrom,
  httpUrlFrom,
  positiveInteger,
  requiredOption,
  UsageError,
} from './args.js';
import { defineCommand, type OptionValues } from './command.js';
import { printable } from './io.js';

const OPERATION_HELP = `Usage: payhook operation <capture|void|refund|split-capture|status> --base-url URL --pos-id ID --order ORDER [options]

Sends one secondary operation (spec 2.2) or the order's status query, as public merchant code calls them, to the
payment service (or 'payhook serve'), through @payhook/payments' API client:
  capture        POST /api/v1/capture        --amount A --currency C [--order-amount A]
  void           POST /api/v1/void           [--currency C] [--comment T] [--server-url URL]
  refund         POST /api/v1/refund         --amount A --currency C [--order-amount A]
  split-capture  POST /api/v1/split/capture  --amount A --currency C --split JSON [--comment T] [--server-url URL]
  status         GET  /api/v1/pos/<pos_id>/orders/<order_id>: the order's operations
Without --order-amount, capture and refund read the order's operations first and refuse an amount above what is
left. Prints the record (or the list) as JSON. Exits 0 on success, 1 when the call failed, 2 on a usage error.
Never retried: after a timeout the outcome is unknown; ask with 'status'.

Options:
  --base-url URL        the service's {base_url} (http or https)
  --pos-id ID           the project (pos_id)
  --order ORDER         the merchant's order_id
  --amount A            charge_amount or refund_amount
  --currency C          order_currency (capture, refund) or currency (void, split-capture)
  --order-amount A      the payment's amount (order_amount)
  --split JSON          split-capture's items: [{"amount":60,"sub_merchant_id":"…"}]
  --comment T, --server-url URL   void and split-capture
  --api-key K           X-API-AUTH's API_KEY (or PAYHOOK_API_KEY)
  --endpoints-key E     X-API-KEY (or PAYHOOK_ENDPOINTS_KEY)
  PAYHOOK_API_SECRET    (environment) the API secret: the key of the default HMAC-SHA256 signature, or sent
                        itself with --auth-form secret
  --auth-scheme WORD    X-API-AUTH's scheme word (or PAYHOOK_AUTH_SCHEME); default SVC: set your service's own
  --auth-form F         hmac (WORD-HMAC-SHA256 <key>:<hmac>, default) or secret (WORD <key>:<secret>)
  --timeout MS          default 10000
  -h, --help            this help

Example:
  PAYHOOK_API_SECRET=… payhook operation refund --base-url http://127.0.0.1:8910 --pos-id 5f0c… --order order-1 \\
    --amount 20 --currency UAH --api-key ak_… --endpoints-key ek_…`;

const OPERATION_OPTIONS = {
  text: 'base-url pos-id order amount currency order-amount split comment server-url api-key endpoints-key auth-scheme auth-form timeout',
} as const;

type OperationValues = OptionValues<typeof OPERATION_OPTIONS>;

const OPERATIONS = ['capture', 'void', 'refund', 'split-capture', 'status'] as const;

function amountFrom(name: string, value: string | undefined): number {
  const amount = Number(requiredOption(name, value));
  if (!Number.isFinite(amount) || amount <= 0) {
    throw new UsageError(`--${name} must be a positive number, not ${JSON.stringify(value)}.`);
  }
  return amount;
}

function splitFrom(value: string | undefined): SplitItem[] {
  try {
    const split: unknown = JSON.parse(requiredOption('split', value));
    if (Array.isArray(split)) return split as SplitItem[];
  } catch {
    // named below
  }
  throw new UsageError('--split must be a JSON array such as [{"amount":60,"sub_merchant_id":"…"}].');
}

/** The optional fields of a void and a split capture. */
function extras(values: OperationValues) {
  return {
    ...(values.comment !== undefined ? { comment: values.comment } : {}),
    ...(values['server-url'] !== undefined ? { serverUrl: values['server-url'] } : {}),
  };
}

/**
 * `payhook operation`: a capture, void, refund, split capture or status query against a live service or
 * `payhook serve`, with the API client's checks and answers.
 *
 * @example
 * const code = await operationCommand(['status', '--base-url', url, '--pos-id', posId, '--order', 'o-1'], processIO());
 */
export const operationCommand = defineCommand({
  help: OPERATION_HELP,
  options: OPERATION_OPTIONS,
  positionals: true,
  run: async ({ values, positionals }, io) => {
    const [operation, extra] = positionals;
    if (!OPERATIONS.includes(operation as (typeof OPERATIONS)[number]) || extra !== undefined) {
      throw new UsageError(`name one operation: ${OPERATIONS.join(', ')}.`);
    }
    const { apiKey, endpointsKey } = apiKeysFrom(values, io);
    const apiSecret = requiredOption('api-secret', io.env.PAYHOOK_API_SECRET, 'PAYHOOK_API_SECRET');
    const authForm = values['auth-form'] ?? 'hmac';
    if (authForm !== 'hmac' && authForm !== 'secret')
      throw new UsageError('--auth-form must be hmac or secret.');
    const client = createApiClient({
      baseUrl: httpUrlFrom('--base-url', values['base-url']).href,
      posId: requiredOption('pos-id', values['pos-id']),
      apiKey,
      endpointsKey,
      apiSecret,
      authScheme: authSchemeFrom(values['auth-scheme'], io),
      authForm,
      timeoutMs: positiveInteger('--timeout', values.timeout, 10_000),
    });
    const orderId = requiredOption('order', values.order);
    const redact = createRedactor([apiKey, endpointsKey, apiSecret]);
    try {
      const answer = await send(client, operation as (typeof OPERATIONS)[number], orderId, values);
      for (const line of redact(JSON.stringify(answer, null, 2)).split('\n')) io.stdout(printable(line));
      return 0;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      io.stderr(`payhook operation: ${printable(redact(`${error.code}: ${error.message}`))}`);
      return 1;
    }
  },
});

function send(
  client: ReturnType<typeof createApiClient>,
  operation: (typeof OPERATIONS)[number],
  orderId: string,
  values: OperationValues,
): Promise<unknown> {
  if (operation === 'status') return client.getOperations(orderId);
  if (operation === 'void') {
    return client.void({
      orderId,
      ...(values.currency ? { currency: values.currency } : {}),
      ...extras(values),
    });
  }
  const amount = amountFrom('amount', values.amount);
  const currency = requiredOption('currency', values.currency);
  if (operation === 'split-capture') {
    return client.splitCapture({
      orderId,
      amount,
      currency,
      split: splitFrom(values.split),
      ...extras(values),
    });
  }
  const orderAmount =
    values['order-amount'] === undefined
      ? {}
      : { orderAmount: amountFrom('order-amount', values['order-amount']) };
  return operation === 'capture'
    ? client.capture({ orderId, amount, currency, ...orderAmount })
    : client.refund({ orderId, amount, currency, ...orderAmount });
}
