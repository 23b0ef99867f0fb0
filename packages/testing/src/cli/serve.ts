import { randomInt } from 'node:crypto';
import { SCHEME_WORD } from '../fake/service.js';
import { type FakeServerOptions, startFakeServer } from '../server.js';
import { algorithmFrom, httpUrlFrom, secretsFrom, UsageError } from './args.js';
import { defineCommand, type OptionValues } from './command.js';
import type { CliIO } from './io.js';
import { throughRelay } from './serve-relay.js';
import { whenAborted } from './until-signal.js';

const USAGE = `Usage: payhook serve --port P --secret S [--api-key K] [--endpoints-key E] [--pos-id ID] [--sector NAME] [--seed N]
                     [--merchant-name NAME] [--split-sum equal|at_most|ignore] [--refund-webhook-code 1000|1004]
                     [--algorithm sha256|sha1] [--auth-scheme WORD] [--strict] [--relay URL]

Runs the fake payment service on http://127.0.0.1:P (P = 0 picks a free port): the API, the hosted checkout and
the 3DS pages, webhooks signed with S. Credentials not given are generated and printed. PAYHOOK_SECRET may
replace --secret. Stops on SIGINT or SIGTERM.

X-API-AUTH is accepted with any scheme word in two forms: WORD-HMAC-SHA256 <api_key>:<hex> (hex: the lowercase
HMAC-SHA256 of the raw body, or of METHOD\nPATH?QUERY\nBODY, keyed with the API secret) and
WORD <api_key>:<API secret>. The API secret is S unless PAYHOOK_API_SECRET (environment) names another.

--algorithm       the webhook signature's digest: sha256 (the spec, default) or sha1 (28 characters, as public
                  integrations verify)
--auth-scheme     the service's scheme word in X-API-AUTH (the spec writes SVC); refused otherwise with --strict

--merchant-name   the shop named on the hosted checkout (default Payhook test shop)
--split-sum       how split amounts must relate to amount (not shown by the spec; default ignore, equal with --strict)
--strict          also refuse what the spec does not show as refused (no description or currency, a card number
                  with spaces, card fields on a hosted request, fields sent empty, init_recurring with auth, split
                  sums, another scheme word than --auth-scheme)
--refund-webhook-code  status_code of refund webhooks (spec 3.1 shows 1000, the default; 1004 on a response)
--relay URL       post every webhook to this @payhook/relay channel (http://127.0.0.1:8443/in/alice) instead of
                  the payments' server_url: with 'payhook relay connect', the whole path runs on one machine

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
  POST /__payhook/faults                    {"duplicate":1,"delayMs":5000,"drop":true}; {} clears; also
                                            "loseFirstAttempt" (retried) and "hold" (until resume)
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

const FLAGS = {
  text: 'port api-key endpoints-key pos-id sector merchant-name seed split-sum refund-webhook-code algorithm auth-scheme relay',
  list: 'secret',
  flag: 'strict',
} as const;

type ServeFlags = OptionValues<typeof FLAGS>;

function oneOf<T extends string>(
  flag: string,
  value: string | undefined,
  choices: readonly T[],
): T | undefined {
  if (value === undefined || (choices as readonly string[]).includes(value)) return value as T | undefined;
  throw new UsageError(`--${flag} must be one of ${choices.join(', ')}, not ${JSON.stringify(value)}.`);
}

/** `--auth-scheme`: a word of letters, digits and `-`. */
function schemeFrom(value: string | undefined): string | undefined {
  if (value !== undefined && !SCHEME_WORD.test(value)) {
    throw new UsageError('--auth-scheme must be a word of letters, digits and "-", such as SVC.');
  }
  return value;
}

/** The parsed flags (and PAYHOOK_SECRET, PAYHOOK_API_SECRET) as the server's options. */
function serverOptions(values: ServeFlags, io: CliIO): FakeServerOptions {
  const port = portFrom(values.port);
  const [secret] = secretsFrom(values.secret, io);
  const posId = values['pos-id'];
  if (posId !== undefined && !UUID.test(posId)) throw new UsageError('--pos-id must be a UUID.');
  const seed = values.seed === undefined ? randomInt(1, 2 ** 31) : Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new UsageError('--seed must be an integer.');
  const splitSum = oneOf('split-sum', values['split-sum'], SPLIT_SUM);
  const refundCode = values['refund-webhook-code'];
  if (refundCode !== undefined && refundCode !== '1000' && refundCode !== '1004') {
    throw new UsageError(`--refund-webhook-code must be 1000 or 1004, not ${JSON.stringify(refundCode)}.`);
  }
  const authScheme = schemeFrom(values['auth-scheme']);
  const apiSecret = io.env.PAYHOOK_API_SECRET || undefined;
  const relay = values.relay === undefined ? undefined : httpUrlFrom('--relay', values.relay).href;
  return {
    port,
    seed,
    realTime: true,
    secret: secret!,
    algorithm: algorithmFrom(values.algorithm),
    ...(posId !== undefined ? { posId } : {}),
    ...(values['api-key'] !== undefined ? { apiKey: values['api-key'] } : {}),
    ...(values['endpoints-key'] !== undefined ? { endpointsKey: values['endpoints-key'] } : {}),
    ...(values.sector !== undefined ? { sector: values.sector } : {}),
    ...(values['merchant-name'] !== undefined ? { merchantName: values['merchant-name'] } : {}),
    ...(splitSum !== undefined ? { splitSum } : {}),
    ...(refundCode !== undefined ? { refundWebhookCode: refundCode } : {}),
    ...(values.strict ? { strict: true } : {}),
    ...(apiSecret !== undefined ? { apiSecret } : {}),
    ...(authScheme !== undefined ? { authScheme } : {}),
    ...(relay !== undefined ? { transport: throughRelay(relay) } : {}),
  };
}

/**
 * `payhook serve`: runs the fake payment service, prints the project's credentials, then `listening on <url>`,
 * until SIGINT or SIGTERM (or the signal given) aborts.
 *
 * @example
 * const stop = new AbortController();
 * const done = serveCommand(['--port', '0', '--secret', 's3cret'], io, stop.signal);
 * stop.abort();
 * await done; // 0
 */
export const serveCommand = defineCommand({
  help: USAGE,
  options: FLAGS,
  helpOnUsageError: true,
  longLived: true,
  run: async ({ values }, io, signal) => {
    const server = await startFakeServer(serverOptions(values, io));
    const { project } = server.fake;
    io.stdout(`pos_id: ${project.posId}`);
    io.stdout(`api_key: ${project.apiKey}`);
    io.stdout(`endpoints_key: ${project.endpointsKey}`);
    const word = server.fake.authScheme ?? 'SVC';
    io.stdout(
      `X-API-AUTH: ${word}-HMAC-SHA256 ${project.apiKey}:<HMAC> or ${word} ${project.apiKey}:<API secret>`,
    );
    io.stdout(`X-API-KEY: ${project.endpointsKey}`);
    io.stdout(
      server.fake.outbox.algorithm === 'sha1'
        ? 'webhooks: signed with SHA-1 (28 characters, --algorithm sha1), as public plugins verify; the spec says SHA-256'
        : 'webhooks: signed with SHA-256 (the spec, 44 characters); public plugins verify SHA-1: restart with --algorithm sha1',
    );
    io.stdout(`listening on ${server.url}`);
    if (values.relay !== undefined)
      io.stdout(`webhooks: to the relay at ${values.relay}, not the payments' server_url`);
    await whenAborted(signal);
    await server.close();
    return 0;
  },
});
