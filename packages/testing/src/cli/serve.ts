import { randomInt } from 'node:crypto';
import { startFakeServer } from '../server.js';
import { noArguments, parseCommand, secretsFrom, UsageError } from './args.js';
import { type CliIO, printable } from './io.js';

const USAGE = `Usage: payhook serve --port P --secret S [--api-key K] [--endpoints-key E] [--pos-id ID] [--sector NAME] [--seed N]
                     [--merchant-name NAME] [--split-sum equal|at_most|ignore] [--refund-webhook-code 1000|1004] [--strict]

Runs the fake payment service on http://127.0.0.1:P (P = 0 picks a free port): the API, the hosted checkout and
the 3DS pages, webhooks signed with S. Credentials not given are generated and printed. PAYHOOK_SECRET may
replace --secret. Stops on SIGINT or SIGTERM.

--merchant-name   the shop named on the hosted checkout (default Payhook test shop)
--split-sum       how split amounts must relate to amount (not shown by the spec; default ignore, equal with --strict)
--strict          also refuse what the spec does not show as refused (no description or currency, a card number
                  with spaces, card fields on a hosted request, init_recurring with auth, split sums)
--refund-webhook-code  status_code of refund webhooks (spec 3.1 shows 1000, the default; 1004 on a response)

Admin routes (header X-API-KEY: the endpoints key), for end-to-end tests in any language:
  GET  /__payhook/clock                     the fake clock (it follows the wall clock)
  POST /__payhook/clock                     {"advanceBy":{"months":1}} or {"advanceTo":"2027-01-01T00:00:00Z"}:
                                            runs every charge and retry due and waits for their webhooks
  GET  /__payhook/deliveries                every webhook attempt with the receiver's answer
  POST /__payhook/payments/<id>/capture|void|refund   {"amount": 10} optional
  POST /__payhook/subscriptions/<id>/cancel
  POST /__payhook/outcomes                  {"orderId":"o-1","outcome":"decline"} (or "cardNumber"; success, 3ds, decline,
                                            insufficient_funds)
  POST /__payhook/subscriptions/<id>/outcomes   {"outcomes":["decline","success"]}: the next charges
  POST /__payhook/faults                    {"duplicate":1,"delayMs":5000,"drop":true}; {} clears
  POST /__payhook/outbox/pause              hold webhooks; then POST /__payhook/outbox/resume {"reverse":true}
  GET  /__payhook/dropped                   webhooks lost to the drop fault`;

const SPLIT_SUM = ['equal', 'at_most', 'ignore'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function portFrom(value: string | undefined): number {
  if (value === undefined) throw new UsageError('--port is required (0 picks a free port).');
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`--port must be an integer from 0 to 65535, not ${JSON.stringify(value)}.`);
  }
  return port;
}

/**
 * `payhook serve` until `signal` aborts: prints the project's credentials, then `listening on <url>`.
 *
 * @example
 * const stop = new AbortController();
 * const done = runServe(['--port', '0', '--secret', 's3cret'], io, stop.signal);
 * stop.abort();
 * await done; // 0
 */
export async function runServe(argv: string[], io: CliIO, signal: AbortSignal): Promise<number> {
  let server: Awaited<ReturnType<typeof startFakeServer>>;
  try {
    const parsed = parseCommand(
      argv,
      {
        port: { type: 'string' },
        secret: { type: 'string', multiple: true },
        'api-key': { type: 'string' },
        'endpoints-key': { type: 'string' },
        'pos-id': { type: 'string' },
        sector: { type: 'string' },
        'merchant-name': { type: 'string' },
        seed: { type: 'string' },
        'split-sum': { type: 'string' },
        'refund-webhook-code': { type: 'string' },
        strict: { type: 'boolean' },
      },
      io,
      USAGE,
    );
    if (parsed === undefined) return 0;
    const { values, positionals } = parsed;
    noArguments(positionals);
    const port = portFrom(values.port);
    const [secret] = secretsFrom(values.secret, io);
    const posId = values['pos-id'];
    if (posId !== undefined && !UUID.test(posId)) throw new UsageError('--pos-id must be a UUID.');
    const seed = values.seed === undefined ? randomInt(1, 2 ** 31) : Number(values.seed);
    if (!Number.isSafeInteger(seed)) throw new UsageError('--seed must be an integer.');
    const splitSum = values['split-sum'];
    if (splitSum !== undefined && !(SPLIT_SUM as readonly string[]).includes(splitSum)) {
      throw new UsageError(
        `--split-sum must be one of ${SPLIT_SUM.join(', ')}, not ${JSON.stringify(splitSum)}.`,
      );
    }
    const refundCode = values['refund-webhook-code'];
    if (refundCode !== undefined && refundCode !== '1000' && refundCode !== '1004') {
      throw new UsageError(`--refund-webhook-code must be 1000 or 1004, not ${JSON.stringify(refundCode)}.`);
    }
    server = await startFakeServer({
      port,
      seed,
      realTime: true,
      secret: secret!,
      ...(posId !== undefined ? { posId } : {}),
      ...(values['api-key'] !== undefined ? { apiKey: values['api-key'] } : {}),
      ...(values['endpoints-key'] !== undefined ? { endpointsKey: values['endpoints-key'] } : {}),
      ...(values.sector !== undefined ? { sector: values.sector } : {}),
      ...(values['merchant-name'] !== undefined ? { merchantName: values['merchant-name'] } : {}),
      ...(splitSum !== undefined ? { splitSum: splitSum as (typeof SPLIT_SUM)[number] } : {}),
      ...(refundCode !== undefined ? { refundWebhookCode: refundCode } : {}),
      ...(values.strict ? { strict: true } : {}),
    });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`payhook serve: ${printable(error.message)}`);
    io.stderr(USAGE);
    return 2;
  }
  const { project } = server.fake;
  io.stdout(`pos_id: ${project.posId}`);
  io.stdout(`api_key: ${project.apiKey}`);
  io.stdout(`endpoints_key: ${project.endpointsKey}`);
  io.stdout(`X-API-AUTH: SVC-HMAC-SHA256 ${project.apiKey}:<SIGNATURE>`);
  io.stdout(`X-API-KEY: ${project.endpointsKey}`);
  io.stdout(`listening on ${server.url}`);
  if (!signal.aborted)
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  await server.close();
  return 0;
}

/**
 * `payhook serve`: runs the fake payment service until SIGINT or SIGTERM.
 *
 * @example
 * process.exitCode = await serveCommand(['--port', '8910', '--secret', 's3cret'], processIO());
 */
export async function serveCommand(argv: string[], io: CliIO): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await runServe(argv, io, stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
