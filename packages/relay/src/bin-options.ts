import { parseArgs } from 'node:util';
import { SERVICE_SENDER_ADDRESSES } from '@payhook/core';
import type { Retention } from './journal/contract.js';

export const HELP = `Usage: payhook-relay [options]          run the relay
       payhook-relay key CHANNEL            print a channel's forwarding key again

Options (each also from the environment variable named):
  --port N              port to listen on (PORT; default 8443)
  --host ADDRESS        address to listen on (default 0.0.0.0)
  --journal WHERE       a directory (file journal, default ./payhook-relay-data), postgres://…, redis://…,
                        redis+cluster://host:port[,host:port…] (Redis Cluster; rediss+cluster:// for TLS) or memory
                        (PAYHOOK_RELAY_JOURNAL)
  --table-prefix P      the PostgreSQL journal's tables: <P>_channels, <P>_events (default payhook_relay)
  --public-url URL      the relay's public origin, for the server_url a new channel is told (PAYHOOK_RELAY_PUBLIC_URL)
  --allowed-senders L   comma-separated addresses allowed to post to /in/…, or 'service' for the spec's address
  --trust-proxy N       read the sender from X-Forwarded-For, N proxies in front (default: the socket's address)
  --tls-cert FILE       serve HTTPS with this certificate chain (PEM) …
  --tls-key FILE        … and this key
  --max-age DURATION    how long deliveries are kept: 72h (default), 30m, 7d
  --max-events N        how many deliveries a channel keeps (default 10000)
  --verify-signature    refuse deliveries whose webhook signature fails, with PAYHOOK_SECRET: the relay then
                        holds the webhook secret (see docs/relay.md for the risk)
  -h, --help            this help

Secrets come from the environment only (argv is visible to other users in 'ps'):
  PAYHOOK_RELAY_SIGNING_SECRET   required, 32+ characters: each channel's forwarding key derives from it
  PAYHOOK_RELAY_ADMIN_TOKEN      16+ characters: creates channels (without it, none can be created)
  PAYHOOK_SECRET                 the webhook secret, only with --verify-signature`;

/** Where the bin keeps its journal. */
type JournalChoice =
  | { kind: 'memory' }
  | { kind: 'file'; directory: string }
  | { kind: 'postgres'; connectionString: string; prefix: string | undefined }
  | { kind: 'redis'; url: string }
  | {
      kind: 'redis-cluster';
      nodes: { host: string; port: number }[];
      username?: string;
      password?: string;
      tls: boolean;
    };

/** Everything the bin was told, checked. */
export interface BinConfig {
  readonly port: number;
  readonly host: string;
  readonly journal: JournalChoice;
  readonly signingSecret: string;
  readonly adminToken: string | undefined;
  readonly publicUrl: string | undefined;
  readonly allowedSenders: readonly string[] | undefined;
  readonly trustProxy: number | false;
  readonly tls: { cert: string; key: string } | undefined;
  readonly retention: Retention;
  readonly verifySecret: string | undefined;
}

/** A bad invocation: printed with the help hint, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function durationMs(value: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(value);
  if (!match)
    throw new UsageError(
      `--max-age must be a duration such as 72h, 30m or 7d, not ${JSON.stringify(value)}.`,
    );
  return Number(match[1]) * UNITS[match[2] ?? 'ms']!;
}

function integer(name: string, value: string | undefined, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value))
    throw new UsageError(`${name} must be a whole number, not ${JSON.stringify(value)}.`);
  return Number(value);
}

function journalFrom(value: string | undefined, prefix: string | undefined): JournalChoice {
  if (value === 'memory') return { kind: 'memory' };
  if (value?.startsWith('postgres://') || value?.startsWith('postgresql://')) {
    return { kind: 'postgres', connectionString: value, prefix };
  }
  if (prefix !== undefined) throw new UsageError('--table-prefix goes with a postgres:// journal.');
  if (value?.startsWith('redis://') || value?.startsWith('rediss://')) return { kind: 'redis', url: value };
  if (value?.startsWith('redis+cluster://') || value?.startsWith('rediss+cluster://'))
    return clusterFrom(value);
  const scheme = value === undefined ? undefined : /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1];
  if (scheme !== undefined) {
    throw new UsageError(
      `--journal takes a directory, postgres://, redis://, redis+cluster:// or memory, not a ${scheme}:// URL.`,
    );
  }
  return { kind: 'file', directory: value ?? './payhook-relay-data' };
}

/**
 * `redis+cluster://[user:password@]host:port[,host:port…]`: a URL cannot hold several hosts, so the nodes are read
 * here; ioredis finds the cluster's other nodes from any of them.
 */
function clusterFrom(value: string): JournalChoice {
  const tls = value.startsWith('rediss+');
  const rest = value.slice(value.indexOf('://') + 3).replace(/\/.*$/, '');
  const at = rest.lastIndexOf('@');
  const credentials = at < 0 ? undefined : rest.slice(0, at);
  const nodes = (at < 0 ? rest : rest.slice(at + 1))
    .split(',')
    .map((node) => node.trim())
    .filter((node) => node !== '')
    .map((node) => {
      let url: URL;
      try {
        url = new URL(`redis://${node}`);
      } catch {
        // Said without the text, which may hold a password.
        throw new UsageError('a redis+cluster:// journal node is not host:port.');
      }
      return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 6379) };
    });
  if (nodes.length === 0) {
    throw new UsageError(
      'a redis+cluster:// journal names its nodes: redis+cluster://host:port[,host:port…].',
    );
  }
  const colon = credentials?.indexOf(':') ?? -1;
  const username = credentials === undefined ? '' : credentials.slice(0, colon < 0 ? undefined : colon);
  const password = credentials === undefined || colon < 0 ? undefined : credentials.slice(colon + 1);
  return {
    kind: 'redis-cluster',
    nodes,
    ...(username ? { username: decodeURIComponent(username) } : {}),
    ...(password === undefined ? {} : { password: decodeURIComponent(password) }),
    tls,
  };
}

function sendersFrom(value: string | undefined): readonly string[] | undefined {
  if (value === undefined) return undefined;
  if (value === 'service') return SERVICE_SENDER_ADDRESSES;
  return value
    .split(',')
    .map((address) => address.trim())
    .filter(Boolean);
}

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  journal: { type: 'string' },
  'table-prefix': { type: 'string' },
  'public-url': { type: 'string' },
  'allowed-senders': { type: 'string' },
  'trust-proxy': { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'max-age': { type: 'string' },
  'max-events': { type: 'string' },
  'verify-signature': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The parsed command line: `help`, `key` with its channel, or the server's configuration. */
export function parseBin(
  argv: string[],
  env: Readonly<Record<string, string | undefined>>,
): { help: true } | { key: string; signingSecret: string } | BinConfig {
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>
  >;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  const signingSecret = env.PAYHOOK_RELAY_SIGNING_SECRET ?? '';
  if (signingSecret.length < 32) {
    throw new UsageError(
      'set PAYHOOK_RELAY_SIGNING_SECRET to 32 characters or more (openssl rand -base64 32).',
    );
  }
  if (positionals[0] === 'key' && positionals.length === 2) return { key: positionals[1]!, signingSecret };
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}.`);
  return configFrom(values, env, signingSecret);
}

function configFrom(
  values: Partial<Record<keyof typeof OPTIONS, string | boolean>>,
  env: Readonly<Record<string, string | undefined>>,
  signingSecret: string,
): BinConfig {
  const text = (name: keyof typeof OPTIONS) => values[name] as string | undefined;
  const cert = text('tls-cert');
  const key = text('tls-key');
  if ((cert === undefined) !== (key === undefined))
    throw new UsageError('--tls-cert and --tls-key go together.');
  const verifySecret = values['verify-signature'] ? env.PAYHOOK_SECRET : undefined;
  if (values['verify-signature'] && !verifySecret)
    throw new UsageError('--verify-signature needs PAYHOOK_SECRET.');
  const trustProxy = integer('--trust-proxy', text('trust-proxy'));
  const maxAge = text('max-age');
  return {
    port: integer('--port', text('port') ?? env.PORT, 8443)!,
    host: text('host') ?? '0.0.0.0',
    journal: journalFrom(text('journal') ?? env.PAYHOOK_RELAY_JOURNAL, text('table-prefix')),
    signingSecret,
    adminToken: env.PAYHOOK_RELAY_ADMIN_TOKEN || undefined,
    publicUrl: text('public-url') ?? env.PAYHOOK_RELAY_PUBLIC_URL,
    allowedSenders: sendersFrom(text('allowed-senders')),
    trustProxy: trustProxy === undefined || trustProxy === 0 ? false : trustProxy,
    tls: cert && key ? { cert, key } : undefined,
    retention: {
      ...(maxAge === undefined ? {} : { maxAgeMs: durationMs(maxAge) }),
      ...(text('max-events') === undefined
        ? {}
        : { maxEvents: integer('--max-events', text('max-events'))! }),
    },
    verifySecret,
  };
}
