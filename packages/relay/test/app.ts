import { createServer, type IncomingMessage } from 'node:http';
import { createWebhookHandler, MemoryStore } from '@payhook/core';
import { closing, listen } from '../../../test/support/listen.ts';
import { verifyRelayHeader } from '../src/index.js';
import { digest, SECRET, SERVICE } from './kit.js';

/** One delivery as the app received it: the relay's sequence, the SHA-256 of the bytes received, core's outcome. */
export interface Received {
  readonly sequence: number;
  readonly sha256: string;
  readonly signedSha256: string;
  readonly sender: string;
  readonly outcome: string;
  /** The refusal's code, when core refused it. */
  readonly code?: string;
}

async function bytesOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The merchant's app behind the client: hashes the bytes received and hands them, with the relay's header, to core's
 * handler (MemoryStore), given the channel key as its `relay` option and the service's address as `allowedSenders`,
 * (or `senders`: the relay's own address as it saw the test's deliveries), so the sender it checks is the original
 * one the header names; its `handled` count per order shows exactly-once.
 * The header's fields are read with `verifyRelayHeader` for the record. `delayMs` makes it slow, so that a client
 * falls behind the relay.
 */
export async function startApp(
  key: string,
  delayMs = 0,
  senders: readonly string[] = [SERVICE],
): Promise<{
  url: string;
  received: Received[];
  handled: Map<string, number>;
  waitFor(count: number, ms?: number): Promise<void>;
}> {
  const received: Received[] = [];
  const handled = new Map<string, number>();
  const webhook = createWebhookHandler({
    secret: SECRET,
    store: new MemoryStore(),
    logger: false,
    allowedSenders: senders,
    relay: { key },
  }).on('purchase.success', (notification) => {
    handled.set(notification.order_id, (handled.get(notification.order_id) ?? 0) + 1);
  });
  const server = createServer(async (req, res) => {
    const body = await bytesOf(req);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const forward = await verifyRelayHeader(req.headers['x-payhook-relay'] as string, body, key);
    const request = new Request('http://app.test/webhooks', {
      method: 'POST',
      headers: {
        'content-type': req.headers['content-type'] ?? '',
        'x-payhook-relay': req.headers['x-payhook-relay'] as string,
      },
      body: new Uint8Array(body),
    });
    const answer = await webhook.fetch(request, undefined, req.socket.remoteAddress);
    const text = await answer.text();
    const parsed = JSON.parse(text) as { outcome?: string; error?: { code: string } };
    received.push({
      sequence: forward.sequence,
      sha256: digest(body),
      signedSha256: forward.sha256,
      sender: forward.sender,
      outcome: parsed.outcome ?? 'refused',
      ...(parsed.error ? { code: parsed.error.code } : {}),
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
