import type { FakeNotification, FakePrimary } from '../fixtures/wire.js';
import { type SignedWebhook, type SignVariant, signWebhook } from '../sign.js';
import {
  algorithmFrom,
  httpUrlFrom,
  onePositional,
  positiveInteger,
  readInput,
  secretsFrom,
  UsageError,
} from './args.js';
import { defineCommand, type OptionValues } from './command.js';
import { EVENTS, type EventLink, resolveEvent, SECONDARY_EVENTS, suggestEvent } from './events.js';
import { type CliIO, printable } from './io.js';
import { clipReply, noAnswer, post } from './post.js';
import { applyAssignments } from './set.js';
import { variantFrom } from './sign.js';

const SEND_HELP = `Usage: payhook send <event> --url URL [--secret S] [options]

Posts a signed fake notification to a webhook endpoint and prints each status and reply.
Exits 0 when every reply is 2xx, 1 otherwise (a refused 'tampered' delivery exits 1: the receiver did its job).

Events:
  ${Object.keys(EVENTS).join('\n  ')}

Options:
  --url URL         the webhook endpoint (http or https)
  --secret S        the project secret (or set PAYHOOK_SECRET, which keeps it out of 'ps')
  --set key=value   change a field; dotted paths (fee.amount=3) and JSON values (amount=99.5,
                    recurring={"id":"r1","status":"active"}); repeatable
  --repeat N        send the same signed notification N times, one after another (a redelivery)
  --count N         send N distinct notifications (fresh ids; with --subscription, charges 1 to N)
  --of PAYMENT      capture, void, refund: the payment acted on, as its notification JSON: a file, - for
                    standard input, or the JSON text (payment_id, order_id, pos_id, amount, currency are used)
  --subscription ID recurring.charge, recurring.failure: charges of one subscription (recurring.id ID, one
                    payment_id and order_id, a transaction_id and date 30 days apart per charge)
  --seed S          reproducible ids (with --count, the n-th uses S:n)
  --variant V       exact (default), unpadded, standardBase64, extraFields, json, sha1, tampered, wrongSecret
  --algorithm A     sha256 (default) or sha1
  --timeout MS      per request (default 10000)
  -h, --help        this help

Examples:
  PAYHOOK_SECRET=s3cret payhook send purchase.success --url http://localhost:3000/webhooks --repeat 3
  payhook send refund --of captured-purchase.json --url http://localhost:3000/webhooks
  payhook send recurring.charge --subscription sub-1 --count 3 --url http://localhost:3000/webhooks`;

/** The payment `--of` names: its notification JSON from a file, standard input (`-`) or the argument itself. */
async function paymentFrom(value: string, io: Parameters<typeof readInput>[1]): Promise<FakePrimary> {
  const text = value.trimStart().startsWith('{') ? value : await readInput(value, io, 'the payment JSON');
  let payment: unknown;
  try {
    payment = JSON.parse(text);
  } catch {
    throw new UsageError('--of must be the payment notification as JSON (a file, - or the JSON text).');
  }
  const record = payment as Record<string, unknown>;
  if (typeof payment !== 'object' || payment === null || typeof record.payment_id !== 'string') {
    throw new UsageError('--of must be a payment notification with a payment_id.');
  }
  return payment as FakePrimary;
}

/** The options of `payhook send`. */
const SEND_OPTIONS = {
  text: 'url repeat count of subscription seed variant algorithm timeout',
  list: 'secret set',
} as const;

type SendValues = OptionValues<typeof SEND_OPTIONS>;

/** One run of `payhook send`, read and checked from its arguments before anything is posted. */
interface SendPlan {
  /** The event as typed: the POST lines print it. */
  event: string;
  url: URL;
  secret: string;
  algorithm: 'sha256' | 'sha1';
  variant: SignVariant | undefined;
  repeat: number;
  timeout: number;
  notifications: FakeNotification[];
}

/**
 * `payhook send`: posts signed fake notifications to a live endpoint, like `stripe trigger` for this service.
 *
 * @example
 * const code = await sendCommand(['refund.success', '--url', 'http://localhost:3000/webhooks'], processIO());
 */
export const sendCommand = defineCommand({
  help: SEND_HELP,
  options: SEND_OPTIONS,
  positionals: true,
  run: async ({ values, positionals }, io) => sendAll(await sendPlanFrom(values, positionals, io), io),
});

async function sendPlanFrom(values: SendValues, positionals: string[], io: CliIO): Promise<SendPlan> {
  const { event, resolved } = eventFrom(positionals);
  checkLinks(values, resolved);
  const url = httpUrlFrom('--url', values.url);
  const [secret] = secretsFrom(values.secret, io);
  const algorithm = algorithmFrom(values.algorithm);
  const variant = variantFrom(values.variant);
  const repeat = positiveInteger('--repeat', values.repeat, 1);
  const count = positiveInteger('--count', values.count, 1);
  const timeout = positiveInteger('--timeout', values.timeout, 10_000);
  const of = values.of === undefined ? undefined : await paymentFrom(values.of, io);
  const notifications = notificationsFrom(resolved, values, count, of);
  return { event, url, secret: secret!, algorithm, variant, repeat, timeout, notifications };
}

/** The one event named, as typed and as resolved to a known event (`refund` → `refund.success`). */
function eventFrom(positionals: string[]): { event: string; resolved: string } {
  const event = onePositional(positionals, 'name an event, e.g. purchase.success.', 'name one event.');
  const resolved = resolveEvent(event);
  if (resolved === undefined) {
    throw new UsageError(
      `unknown event ${JSON.stringify(event)}.${suggestEvent(event)} See the list in --help.`,
    );
  }
  return { event, resolved };
}

/** `--of` and `--subscription` apply to the events they link, and a subscription has an id. */
function checkLinks(values: SendValues, resolved: string): void {
  if (values.of !== undefined && !SECONDARY_EVENTS.has(resolved)) {
    throw new UsageError(`--of links a capture, void or refund to its payment, not ${resolved}.`);
  }
  if (values.subscription !== undefined && !resolved.startsWith('recurring.')) {
    throw new UsageError(
      `--subscription applies to recurring.charge and recurring.failure, not ${resolved}.`,
    );
  }
  if (values.subscription === '') throw new UsageError('--subscription is empty.');
}

/** `count` notifications of the event, each with the `--set` assignments applied. */
function notificationsFrom(
  resolved: string,
  values: SendValues,
  count: number,
  of: FakePrimary | undefined,
): FakeNotification[] {
  const build = EVENTS[resolved]!;
  const { subscription } = values;
  const assignments = values.set ?? [];
  return Array.from({ length: count }, (_, i) => {
    // Charges of one subscription share its ids (seeded by the subscription); each is charge i + 1.
    if (subscription !== undefined) {
      const link: EventLink = { subscription, charge: i + 1 };
      return applyAssignments(build(values.seed, link), assignments);
    }
    const seed = values.seed === undefined ? undefined : i === 0 ? values.seed : `${values.seed}:${i}`;
    return applyAssignments(build(seed, of ? { of } : {}), assignments);
  });
}

/** Posts each notification `repeat` times and prints every reply, then the tally: 1 unless every reply was 2xx. */
async function sendAll(plan: SendPlan, io: CliIO): Promise<number> {
  const tally = new Map<string, number>();
  let failed = 0;
  let n = 0;
  for (const notification of plan.notifications) {
    const signed = signWebhook(notification, plan.secret, {
      algorithm: plan.algorithm,
      variant: plan.variant,
    });
    const id = 'operation_id' in notification ? notification.operation_id : notification.payment_id;
    io.stdout(
      `POST ${plan.url.href} ${plan.event} ${printable(`${notification.method} ${String(id)}`)} (${signed.variant})`,
    );
    for (let r = 0; r < plan.repeat; r++) {
      n++;
      const { label, ok } = await postOnce(plan, signed, n, io);
      if (!ok) failed++;
      tally.set(label, (tally.get(label) ?? 0) + 1);
    }
  }
  io.stdout(`sent ${n}: ${[...tally].map(([label, k]) => `${k} ${printable(label)}`).join(', ')}`);
  return failed === 0 ? 0 : 1;
}

/** The `n`-th post, its reply printed: its tally label, and whether it was a 2xx. */
async function postOnce(
  plan: SendPlan,
  signed: SignedWebhook,
  n: number,
  io: CliIO,
): Promise<{ label: string; ok: boolean }> {
  let status: number;
  let reply: string;
  try {
    ({ status, text: reply } = await post(plan.url, signed.headers, signed.body, plan.timeout));
  } catch (error) {
    io.stderr(`#${n} ${noAnswer(error)}`);
    return { label: 'no answer', ok: false };
  }
  io.stdout(`#${n} ${status} ${printable(clipReply(reply))}`);
  return { label: replyLabel(status, reply), ok: status >= 200 && status <= 299 };
}

/** A payhook reply's outcome, else its status and error code, else its status. */
function replyLabel(status: number, reply: string): string {
  try {
    const json = JSON.parse(reply) as { outcome?: unknown; error?: { code?: unknown } };
    if (typeof json.outcome === 'string') return json.outcome;
    if (typeof json.error?.code === 'string') return `${status} ${json.error.code}`;
  } catch {
    // Not a payhook reply: the status is the label.
  }
  return String(status);
}
