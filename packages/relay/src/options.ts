import type { SecretList, SignatureAlgorithm } from '@payhook/core';
import type { Journal } from './journal/contract.js';

/** Where log lines go: a `console`-like object, or `false` for none. Lines never hold a token, key or body. */
export type RelayLogger = Pick<Console, 'info' | 'warn' | 'error'>;

/**
 * The relay's options: the journal, its secrets and its edge checks.
 *
 * @example
 * const relay = createRelay({
 *   journal: new FileJournal({ directory: '/var/lib/payhook-relay' }),
 *   adminToken: process.env.PAYHOOK_RELAY_ADMIN_TOKEN,
 *   signingSecret: process.env.PAYHOOK_RELAY_SIGNING_SECRET!,
 * });
 */
export interface RelayOptions {
  /** Where channels and deliveries are kept: `MemoryJournal`, `FileJournal`, `PostgresJournal`, `RedisJournal`. */
  journal: Journal;
  /**
   * The secret each channel's forwarding key is derived from (`channelKey`); at least 32 characters. Changing it
   * changes every channel's key.
   */
  signingSecret: string;
  /** The token that creates channels (`POST /channels`); without it, none can be created over HTTP. */
  adminToken?: string;
  /**
   * Addresses allowed to post to `/in/<channel>`; others answer 403 and nothing is journaled. Only where the
   * relay sees the real address (directly, or behind proxies named by `trustProxy`).
   */
  allowedSenders?: readonly string[];
  /**
   * Read the sender from `X-Forwarded-For`: `true` its first entry, `n` the entry the `n`-th proxy from the relay
   * added. Only behind proxies that set it.
   * @default false
   */
  trustProxy?: boolean | number;
  /**
   * Opt-in: verify the webhook signature at the edge and journal only what the service signed. The relay then
   * holds the webhook secret, which public integrations also use to sign API requests (refunds included): see
   * docs/relay.md before turning it on.
   */
  verifySignature?: { secret: SecretList; algorithm?: SignatureAlgorithm };
  /**
   * The largest body accepted at `/in/<channel>`.
   * @default 1_048_576
   */
  maxBodyBytes?: number;
  /**
   * How long a journal write may take before the delivery is answered 503 (the service redelivers).
   * @default 5_000
   */
  writeTimeoutMs?: number;
  /**
   * How often an idle stream sends a heartbeat event.
   * @default 15_000
   */
  heartbeatMs?: number;
  /**
   * How often an idle stream reads the journal again: a delivery journaled by another relay instance (a shared
   * PostgreSQL or Redis journal) is streamed within this. Deliveries journaled by this instance go out at once.
   * @default 1_000
   */
  pollMs?: number;
  /**
   * The longest a long-poll request (`GET /out/<channel>/events?wait=`) is held.
   * @default 25_000
   */
  longPollMaxMs?: number;
  /** The relay's public origin (`https://relay.example.com`), for the `server_url` a new channel is told. */
  publicUrl?: string;
  /**
   * A path prefix the relay is mounted under (`/relay`), stripped before routing.
   * @default ''
   */
  basePath?: string;
  /** @default console */
  logger?: RelayLogger | false;
}

export interface ResolvedOptions {
  readonly journal: Journal;
  readonly signingSecret: string;
  readonly adminToken: string | undefined;
  readonly allowedSenders: readonly string[] | undefined;
  readonly trustProxy: boolean | number;
  readonly verifySignature: { secret: SecretList; algorithm: SignatureAlgorithm } | undefined;
  readonly maxBodyBytes: number;
  readonly writeTimeoutMs: number;
  readonly heartbeatMs: number;
  readonly pollMs: number;
  readonly longPollMaxMs: number;
  readonly publicUrl: string | undefined;
  readonly basePath: string;
  readonly logger: RelayLogger;
}

const SILENT: RelayLogger = { info() {}, warn() {}, error() {} };

function positive(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved < 1) {
    throw new TypeError(`[@payhook/relay] ${name} must be a positive integer, not ${String(value)}.`);
  }
  return resolved;
}

function checkSecrets(options: RelayOptions): void {
  if (typeof options.signingSecret !== 'string' || options.signingSecret.length < 32) {
    throw new TypeError(
      '[@payhook/relay] signingSecret must be a string of at least 32 characters (openssl rand -base64 32).',
    );
  }
  if (
    options.adminToken !== undefined &&
    (typeof options.adminToken !== 'string' || options.adminToken.length < 16)
  ) {
    throw new TypeError('[@payhook/relay] adminToken must be a string of at least 16 characters when given.');
  }
}

function checkPublicUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new TypeError(`[@payhook/relay] publicUrl must be an http(s) URL, not ${JSON.stringify(url)}.`);
  }
  return url.replace(/\/+$/, '');
}

/** Every option checked once, defaults filled in; a `TypeError` names a bad one. */
export function resolveOptions(options: RelayOptions): ResolvedOptions {
  if (typeof options?.journal?.append !== 'function') {
    throw new TypeError(
      '[@payhook/relay] journal is required: new MemoryJournal(), FileJournal, PostgresJournal…',
    );
  }
  checkSecrets(options);
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  if (basePath !== '' && !basePath.startsWith('/')) {
    throw new TypeError(`[@payhook/relay] basePath must start with '/', not ${JSON.stringify(basePath)}.`);
  }
  const verify = options.verifySignature;
  return {
    journal: options.journal,
    signingSecret: options.signingSecret,
    adminToken: options.adminToken,
    allowedSenders: options.allowedSenders,
    trustProxy: options.trustProxy ?? false,
    verifySignature: verify ? { secret: verify.secret, algorithm: verify.algorithm ?? 'sha256' } : undefined,
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, 1_048_576),
    writeTimeoutMs: positive('writeTimeoutMs', options.writeTimeoutMs, 5_000),
    heartbeatMs: positive('heartbeatMs', options.heartbeatMs, 15_000),
    pollMs: positive('pollMs', options.pollMs, 1_000),
    longPollMaxMs: positive('longPollMaxMs', options.longPollMaxMs, 25_000),
    publicUrl: checkPublicUrl(options.publicUrl),
    basePath,
    logger: options.logger === false ? SILENT : (options.logger ?? console),
  };
}
