import { homedir } from 'node:os';
import { join } from 'node:path';
import type { AppAnswer, ConnectReport } from '@payhook/relay/client';
import {
  httpUrlFrom,
  parseCommand,
  positiveInteger,
  requiredOption,
  runCommand,
  UsageError,
} from './args.js';
import { type CliIO, printable } from './io.js';
import { untilSignal } from './until-signal.js';

const RELAY_HELP = `Usage: payhook relay connect URL --forward-to URL [--cursor-file F] [--long-poll] [--max-reconnects N]
       payhook relay replay URL --from N [--to N] --forward-to URL
       payhook relay status URL [--cursor-file F]
       payhook relay channel create NAME --relay URL

A channel of @payhook/relay (payhook-relay) forwarded to an app on this machine. URL is the channel's URL on the
relay (https://relay.example.com/out/alice), printed by 'channel create'.
  connect   forward each delivery to the app, in order, byte for byte with its X-Payhook-Relay header; the place
            in the channel is kept in the cursor file, so a restart continues where the app last answered;
            a delivery the app answers 5xx, 408, 409, 429 or not at all is tried again with backoff; one line
            per answer; exits 1 after --max-reconnects failed connection attempts in a row
  replay    send deliveries --from N [--to N] again, to any endpoint (an app that handled them answers duplicate)
  status    what the channel holds, and how far this machine's cursor is behind
  channel create NAME   a new channel (admin token): prints its server_url, and its token and key once

Options:
  --token T             the channel's token (or PAYHOOK_RELAY_TOKEN; argv is visible in 'ps')
  --forward-to URL      the app's webhook endpoint (http://localhost:3000/webhooks)
  --cursor-file F       default ~/.payhook/relay/<host>/<channel>.json
  --long-poll           long-poll instead of Server-Sent Events (for networks that cut open streams)
  --max-reconnects N    default 10
  --from N, --to N      replay: the first and last sequence (default to: the last)
  --relay URL           channel create: the relay's origin (https://relay.example.com)
  --admin-token T       channel create: the admin token (or PAYHOOK_RELAY_ADMIN_TOKEN)
  -h, --help            this help

Needs @payhook/relay: npm install -D @payhook/relay`;

type RelayClient = typeof import('@payhook/relay/client');

async function loadClient(): Promise<RelayClient> {
  try {
    return (await import('@payhook/relay/client')) as RelayClient;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw error;
    throw new Error(
      'payhook relay needs @payhook/relay, which could not be loaded: npm install -D @payhook/relay',
    );
  }
}

const OPTIONS = {
  token: { type: 'string' },
  'forward-to': { type: 'string' },
  'cursor-file': { type: 'string' },
  'long-poll': { type: 'boolean' },
  'max-reconnects': { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  relay: { type: 'string' },
  'admin-token': { type: 'string' },
} as const;

type Values = Partial<Record<keyof typeof OPTIONS, string | boolean>>;

function text(values: Values, name: keyof typeof OPTIONS): string | undefined {
  return values[name] as string | undefined;
}

/** The default cursor file: one per relay host and channel, under the home directory. */
function defaultCursorFile(url: URL): string {
  const channel = url.pathname.split('/').filter(Boolean).at(-1) ?? 'channel';
  const host = url.host.replace(/[^A-Za-z0-9.-]/g, '_');
  return join(homedir(), '.payhook', 'relay', host, `${channel.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
}

function sequenceFrom(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new UsageError(`${name} must be a sequence number (1 or more), not ${JSON.stringify(value)}.`);
  }
  return Number(value);
}

function seconds(ms: number | undefined): string {
  if (ms === undefined) return 'no delivery yet';
  const s = Math.round(ms / 1000);
  return `last delivery ${s < 120 ? `${s} s` : `${Math.round(s / 60)} min`} ago`;
}

function answerText(answer: AppAnswer): string {
  if (answer.status === 0) return `no answer (${answer.error ?? 'failed'})`;
  return `${answer.status}${answer.outcome ? ` ${answer.outcome}` : ''} in ${Math.round(answer.ms)} ms`;
}

/** One line per report; heartbeats at most once a minute. */
function reporter(io: CliIO): (report: ConnectReport) => void {
  let quietUntil = 0;
  return (report) => {
    if (report.type === 'connected') io.stderr(`payhook relay: connected, after sequence ${report.after}`);
    else if (report.type === 'delivered') io.stdout(`#${report.sequence} ${answerText(report.answer)}`);
    else if (report.type === 'refused') {
      io.stdout(`#${report.sequence} ${answerText(report.answer)}: refused by the app, not retried`);
    } else if (report.type === 'retrying') {
      io.stdout(
        `#${report.sequence} ${answerText(report.answer)}: try ${report.attempt + 1} in ${report.waitMs} ms`,
      );
    } else if (report.type === 'gap') {
      io.stderr(
        `payhook relay: ${report.missed} deliveries (${report.after + 1} to ${report.oldest - 1}) were deleted by the relay's retention before they were read`,
      );
    } else if (report.type === 'disconnected') {
      io.stderr(
        `payhook relay: disconnected (${printable(report.reason)}); again in ${(report.waitMs / 1000).toFixed(1)} s, attempt ${report.failures}; ${seconds(report.lastDeliveryAgoMs)}`,
      );
    } else if (report.type === 'heartbeat' && Date.now() >= quietUntil) {
      quietUntil = Date.now() + 60_000;
      io.stderr(
        `payhook relay: connected, relay at sequence ${report.last}; ${seconds(report.lastDeliveryAgoMs)}`,
      );
    }
  };
}

function channelUrl(positionals: readonly string[]): URL {
  if (positionals.length > 2) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[2])}.`);
  return httpUrlFrom('URL', positionals[1]);
}

function tokenFrom(values: Values, io: CliIO): string {
  return requiredOption('token', text(values, 'token') ?? io.env.PAYHOOK_RELAY_TOKEN, 'PAYHOOK_RELAY_TOKEN');
}

async function connect(positionals: readonly string[], values: Values, io: CliIO): Promise<number> {
  const url = channelUrl(positionals);
  const token = tokenFrom(values, io);
  const forwardTo = httpUrlFrom('--forward-to', text(values, 'forward-to'));
  const maxReconnects = positiveInteger('--max-reconnects', text(values, 'max-reconnects'), 10);
  const cursorFile = text(values, 'cursor-file') ?? defaultCursorFile(url);
  const client = await loadClient();
  io.stderr(`payhook relay: forwarding ${url.href} to ${forwardTo.href} (cursor ${cursorFile})`);
  return untilSignal(async (signal) => {
    try {
      await client.connectRelay({
        url: url.href,
        token,
        forwardTo: forwardTo.href,
        cursor: client.fileCursor(cursorFile),
        transport: values['long-poll'] ? 'long-poll' : 'sse',
        maxReconnects,
        signal,
        onReport: reporter(io),
      });
      io.stderr('payhook relay: stopped; the cursor is saved');
      return 0;
    } catch (error) {
      io.stderr(`payhook relay: ${printable(error instanceof Error ? error.message : String(error))}`);
      return 1;
    }
  });
}

async function replay(positionals: readonly string[], values: Values, io: CliIO): Promise<number> {
  const url = channelUrl(positionals);
  const token = tokenFrom(values, io);
  const target = httpUrlFrom('--forward-to', text(values, 'forward-to'));
  const from = sequenceFrom('--from', text(values, 'from'));
  if (from === undefined) throw new UsageError('--from is required.');
  const to = sequenceFrom('--to', text(values, 'to'));
  if (to !== undefined && to < from) throw new UsageError('--to must not be before --from.');
  const client = await loadClient();
  let failed = 0;
  const sent = await client.replayRelay({
    url: url.href,
    token,
    from,
    ...(to === undefined ? {} : { to }),
    target: target.href,
    onAnswer: (sequence, answer) => {
      if (answer.status < 200 || answer.status > 299) failed += 1;
      io.stdout(`#${sequence} ${answerText(answer)}`);
    },
  });
  io.stderr(`payhook relay: ${sent} sent again, ${failed} not answered 2xx`);
  return failed > 0 ? 1 : 0;
}

async function status(positionals: readonly string[], values: Values, io: CliIO): Promise<number> {
  const url = channelUrl(positionals);
  const token = tokenFrom(values, io);
  const client = await loadClient();
  const channel = await client.relayStatus({ url: url.href, token });
  const cursor = await client.fileCursor(text(values, 'cursor-file') ?? defaultCursorFile(url)).load();
  io.stdout(
    `channel ${channel.channel}: last ${channel.last}, ${channel.retained} retained from ${channel.oldest}`,
  );
  io.stdout(`last received: ${channel.lastReceivedAt ?? 'never'}`);
  if (cursor && cursor.url === url.href.replace(/\/+$/, '')) {
    const ago = cursor.deliveredAt === undefined ? undefined : Date.now() - cursor.deliveredAt;
    io.stdout(
      `this machine: at ${cursor.sequence}, ${channel.last - cursor.sequence} behind; ${seconds(ago)}`,
    );
  } else {
    io.stdout('this machine: no cursor for this channel (payhook relay connect has not run here)');
  }
  return 0;
}

async function createChannel(positionals: readonly string[], values: Values, io: CliIO): Promise<number> {
  if (positionals[1] !== 'create' || positionals.length !== 3) {
    throw new UsageError('the channel action is: payhook relay channel create NAME --relay URL.');
  }
  const relay = httpUrlFrom('--relay', text(values, 'relay'));
  const adminToken = requiredOption(
    'admin-token',
    text(values, 'admin-token') ?? io.env.PAYHOOK_RELAY_ADMIN_TOKEN,
    'PAYHOOK_RELAY_ADMIN_TOKEN',
  );
  const client = await loadClient();
  const created = await client.createRelayChannel({ relay: relay.href, adminToken, name: positionals[2]! });
  io.stdout(`channel:    ${created.channel}`);
  io.stdout(`server_url: ${created.serverUrl}   (the payments' server_url)`);
  io.stdout(
    `connect:    payhook relay connect ${created.connectUrl} --forward-to http://localhost:3000/webhooks`,
  );
  io.stdout('Shown once, keep them (the relay stores neither):');
  io.stdout(`  PAYHOOK_RELAY_TOKEN=${created.token}   (reads the channel)`);
  io.stdout(`  PAYHOOK_RELAY_KEY=${created.key}   (verifyRelayHeader in the app)`);
  return 0;
}

const ACTIONS = { connect, replay, status, channel: createChannel } as const;

/**
 * `payhook relay connect|replay|status|channel create`: a channel of a `@payhook/relay` relay forwarded to a
 * local app. `@payhook/relay` is an optional peer, loaded only here.
 *
 * @example
 * const code = await relayCommand(['status', 'https://relay.example.com/out/alice'], processIO());
 */
export async function relayCommand(argv: string[], io: CliIO): Promise<number> {
  return runCommand('relay', io, async () => {
    const parsed = parseCommand(argv, OPTIONS, io, RELAY_HELP);
    if (parsed === undefined) return 0;
    const { values, positionals } = parsed;
    const action = ACTIONS[positionals[0] as keyof typeof ACTIONS];
    if (!action) {
      throw new UsageError(
        `the action is connect, replay, status or channel create, not ${JSON.stringify(positionals[0] ?? '')}.`,
      );
    }
    return action(positionals, values as Values, io);
  });
}
