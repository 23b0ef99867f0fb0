import { encodeBase64Url } from '@payhook/core/adapter';
import { hmacKey } from './crypto.js';
import { channelKey, signRelayHeader } from './forward-header.js';
import type { JournalEvent } from './journal/contract.js';

/**
 * One delivery as the relay sends it to a client (an SSE event's data, an item of a long-poll answer): the body
 * as base64url of the exact bytes received, and the signed header the client forwards with it.
 *
 * @example
 * const body = decodeBase64Url(event.body)!; // the bytes the service sent
 */
export interface RelayEvent {
  readonly sequence: number;
  /** ISO 8601, UTC. */
  readonly receivedAt: string;
  readonly mediaType: string;
  readonly sender: string;
  /** SHA-256 of the body, base64url without padding. */
  readonly sha256: string;
  /** The body, base64url with padding. */
  readonly body: string;
  /** The `X-Payhook-Relay` header to forward with it. */
  readonly header: string;
}

/** Signs each channel's events with its key, derived once per channel. */
export class EventSigner {
  readonly #secret: string;
  readonly #keys = new Map<string, Promise<string>>();
  readonly #imported = new Map<string, Promise<CryptoKey>>();

  constructor(signingSecret: string) {
    this.#secret = signingSecret;
  }

  key(channel: string): Promise<string> {
    let key = this.#keys.get(channel);
    if (!key) {
      key = channelKey(this.#secret, channel);
      this.#keys.set(channel, key);
    }
    return key;
  }

  #importedKey(channel: string): Promise<CryptoKey> {
    let key = this.#imported.get(channel);
    if (!key) {
      key = this.key(channel).then(hmacKey);
      this.#imported.set(channel, key);
    }
    return key;
  }

  async wire(channel: string, event: JournalEvent): Promise<RelayEvent> {
    const receivedAt = new Date(event.receivedAt);
    const header = await signRelayHeader(
      { channel, sequence: event.sequence, receivedAt, sender: event.sender, sha256: event.sha256 },
      await this.#importedKey(channel),
    );
    return {
      sequence: event.sequence,
      receivedAt: receivedAt.toISOString(),
      mediaType: event.mediaType,
      sender: event.sender,
      sha256: event.sha256,
      body: encodeBase64Url(event.body),
      header,
    };
  }
}
