import { fetchTransport, type WebhookTransport } from '../fake/transport.js';

/**
 * `payhook serve --relay URL`: the fake's transport with every webhook posted to a relay channel's `/in/<channel>`
 * instead of the payment's `server_url`, so the service → relay → `payhook relay connect` → app path runs on one
 * machine. The body and signature are the fake's, unchanged.
 *
 * @example
 * await startFakeServer({ secret, transport: throughRelay('http://127.0.0.1:8443/in/alice') });
 */
export function throughRelay(url: string): WebhookTransport {
  return (message) => fetchTransport({ ...message, url });
}
