import { createServer, type IncomingMessage } from 'node:http';
import { createWebhookHandler, MemoryStore } from '@payhook/core';
import { closing, listen } from '../../../test/support/listen.ts';
import { verifyRelayHeader } from '../src/index.js';
import { digest, SECRET } from './kit.js';

/** One delivery as the app received it: the relay's sequence, the SHA-256 of the bytes received, core's outcome. */
export interface Received {
  readonly sequence: number;
  readonly sha256: string;
  readonly signedSha256: string;
  readonly sender: string;
  readonly outcome: string;
}

async function bytesOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The merchant's app behind the client: checks each forward's relay header with the channel key, hashes the bytes
 * received, and hands them to core's handler (MemoryStore), whose `handled` count per order shows exactly-once;
 * `delayMs` makes it slow, so that a client falls behind the relay.
 */
export async function startApp(
  key: string,
  delayMs = 0,
): Promise<{
  url: string;
  received: Received[];
  handled: Map<string, number>;
  waitFor(count: number, ms?: number): Promise<void>;
}> {
  const received: Received[] = [];
  const handled = new Map<string, number>();
  const webhook = createWebhookHandler({ secret: SECRET, store: new MemoryStore(), logger: false }).on(
    'purchase.success',
    (notification) => {
      handled.set(notification.order_id, (handled.get(notification.order_id) ?? 0) + 1);
    },
  );
  const server = createServer(async (req, res) => {
    const body = await bytesOf(req);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const forward = await verifyRelayHeader(req.headers['x-payhook-relay'] as string, body, key);
    const request = new Request('http://app.test/webhooks', {
      method: 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? '' },
      body: new Uint8Array(body),
    });
    const answer = await webhook.fetch(request);
    const text = await answer.text();
    received.push({
      sequence: forward.sequence,
      sha256: digest(body),
      signedSha256: forward.sha256,
      sender: forward.sender,
      outcome: (JSON.parse(text) as { outcome?: string }).outcome ?? 'refused',
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
  });
  const url = await listen(server);
  return {
    url: `${url}/webhooks`,
    received,
    handled,
    async waitFor(count, ms = 20_000) {
      const deadline = Date.now() + ms;
      while (received.length < count) {
        if (Date.now() > deadline)
          throw new Error(`the app received ${received.length} of ${count} in ${ms} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
  };
}

export { closing };
