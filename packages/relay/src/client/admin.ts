import type { CreatedChannel } from '../channels.js';
import { RelayError } from '../errors.js';
import type { RelayEvent } from '../wire.js';
import { type AppAnswer, postOnce } from './forward.js';
import { createPoster, type Poster } from './post.js';

/** The relay's refusal as a `RelayError` (`relay.refused`, with the relay's own code when it sent one). */
async function refusalOf(response: Response, what: string): Promise<RelayError> {
  const text = await response.text().catch(() => '');
  const code = /"code"\s*:\s*"([a-z_.]{1,60})"/.exec(text)?.[1];
  return new RelayError(
    'relay.refused',
    `${what}: the relay answered ${response.status}${code ? ` ${code}` : ''}.`,
  );
}

/**
 * Creates a channel with the relay's admin token; the answer holds the channel's token and key, shown only now.
 *
 * @example
 * const created = await createRelayChannel({ relay: 'https://relay.example.com', adminToken, name: 'alice' });
 * console.log(created.serverUrl, created.token);
 */
export async function createRelayChannel(options: {
  relay: string;
  adminToken: string;
  name: string;
  fetch?: typeof fetch;
}): Promise<CreatedChannel> {
  const fetcher = options.fetch ?? globalThis.fetch;
  const response = await fetcher(`${options.relay.replace(/\/+$/, '')}/channels`, {
    method: 'POST',
    headers: { authorization: `Bearer ${options.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: options.name }),
  });
  if (response.status !== 201) throw await refusalOf(response, `creating channel ${options.name}`);
  return (await response.json()) as CreatedChannel;
}

/**
 * What a channel holds, as `GET /out/<channel>/status` answers.
 *
 * @example
 * const { last, lastReceivedAt } = await relayStatus({ url, token });
 */
export interface ChannelStatus {
  readonly channel: string;
  readonly last: number;
  readonly oldest: number;
  readonly retained: number;
  readonly lastReceivedAt: string | null;
}

/**
 * Reads a channel's status with its token.
 *
 * @example
 * const status = await relayStatus({ url: 'https://relay.example.com/out/alice', token });
 */
export async function relayStatus(options: {
  url: string;
  token: string;
  fetch?: typeof fetch;
}): Promise<ChannelStatus> {
  const fetcher = options.fetch ?? globalThis.fetch;
  const response = await fetcher(`${options.url.replace(/\/+$/, '')}/status`, {
    headers: { authorization: `Bearer ${options.token}` },
  });
  if (response.status !== 200) throw await refusalOf(response, 'reading the status');
  return (await response.json()) as ChannelStatus;
}

/**
 * Options of {@link replayRelay}.
 *
 * @example
 * await replayRelay({ url, token, from: 40, to: 42, target: 'http://localhost:3000/webhooks' });
 */
export interface ReplayOptions {
  url: string;
  token: string;
  /** The first sequence sent again. */
  from: number;
  /** The last sequence sent again. @default the channel's last */
  to?: number;
  /** Where the deliveries go (any webhook endpoint). */
  target: string;
  onAnswer?: (sequence: number, answer: AppAnswer) => void;
  fetch?: typeof fetch;
}

/**
 * Sends a range of a channel's retained deliveries again to `target`, in order, once each (no cursor is moved).
 * Safe against an app that handled them: core answers each copy `duplicate`. Resolves how many were sent.
 *
 * @example
 * const sent = await replayRelay({ url, token, from: 1, target: 'http://localhost:3000/webhooks' });
 */
export async function replayRelay(options: ReplayOptions): Promise<number> {
  const poster = createPoster(options.target);
  try {
    return await replayWith(options, poster);
  } finally {
    poster.close();
  }
}

async function replayWith(options: ReplayOptions, poster: Poster): Promise<number> {
  const fetcher = options.fetch ?? globalThis.fetch;
  const base = options.url.replace(/\/+$/, '');
  let after = options.from - 1;
  let sent = 0;
  for (;;) {
    const url = new URL(`${base}/events`);
    url.searchParams.set('after', String(after));
    const response = await fetcher(url, { headers: { authorization: `Bearer ${options.token}` } });
    if (response.status !== 200) throw await refusalOf(response, 'reading the channel');
    const { events } = (await response.json()) as { events: RelayEvent[] };
    const wanted = events.filter((event) => options.to === undefined || event.sequence <= options.to);
    for (const event of wanted) {
      options.onAnswer?.(event.sequence, await postOnce(event, poster));
      sent += 1;
    }
    if (wanted.length < events.length || events.length === 0) return sent;
    after = events.at(-1)!.sequence;
  }
}
