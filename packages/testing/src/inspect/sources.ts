import { open, stat } from 'node:fs/promises';
import {
  type InspectedDelivery,
  readCaptureLine,
  readFakeAttempt,
  type UnreadableLine,
} from './deliveries.js';

/** Everything the inspector has read so far, in arrival order. */
export interface DeliveryLog {
  readonly deliveries: InspectedDelivery[];
  readonly unreadable: UnreadableLine[];
}

/** A source the inspector reads again on every refresh of the page: what arrived since the last read. */
export interface DeliverySource {
  read(log: DeliveryLog): Promise<void>;
}

const CHUNK = 1 << 20;
/** A line longer than this is no captured delivery (core caps a body at 1 MiB): dropped up to its newline. */
const MAX_LINE = 16 << 20;

/**
 * A capture file followed as it grows: each read takes the bytes appended since the last one, whole lines only
 * (a line still being written waits for its newline). A file that shrank was rotated or truncated: it is read
 * again from its start.
 */
export function followCapture(path: string): DeliverySource {
  let offset = 0;
  let line = 0;
  let pending = Buffer.alloc(0);
  let skipping = false;
  return {
    async read(log) {
      const { size } = await stat(path);
      if (size < offset) {
        offset = 0;
        line = 0;
        pending = Buffer.alloc(0);
        skipping = false;
      }
      if (size === offset) return;
      const file = await open(path, 'r');
      try {
        while (offset < size) {
          const chunk = Buffer.alloc(Math.min(CHUNK, size - offset));
          const { bytesRead } = await file.read(chunk, 0, chunk.length, offset);
          if (bytesRead === 0) break;
          offset += bytesRead;
          pending = Buffer.concat([pending, chunk.subarray(0, bytesRead)]);
          let end = pending.indexOf(10);
          if (end === -1 && pending.length > MAX_LINE) {
            if (!skipping) log.unreadable.push({ line: line + 1, reason: 'longer than 16 MiB' });
            skipping = true;
            pending = Buffer.alloc(0);
            continue;
          }
          while (end !== -1) {
            const raw = pending.subarray(0, end).toString('utf8').trim();
            pending = pending.subarray(end + 1);
            line += 1;
            if (skipping) skipping = false;
            else if (raw !== '') {
              const read = readCaptureLine(raw, line, log.deliveries.length);
              if ('id' in read) log.deliveries.push(read);
              else log.unreadable.push(read);
            }
            end = pending.indexOf(10);
          }
        }
      } finally {
        await file.close();
      }
    },
  };
}

/**
 * The delivery attempts of a running fake service (`payhook serve`, `startFakeServer`) through its admin route,
 * which needs the project's endpoints key.
 */
export function followFakeService(base: URL, endpointsKey: string, timeoutMs = 5_000): DeliverySource {
  let seen = 0;
  return {
    async read(log) {
      const response = await fetch(new URL('/__payhook/deliveries', base), {
        headers: { 'x-api-key': endpointsKey },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) {
        throw new Error(
          `the fake service answered ${response.status} to GET /__payhook/deliveries (check --endpoints-key)`,
        );
      }
      const attempts = (await response.json()) as Record<string, unknown>[];
      for (const attempt of attempts.slice(seen))
        log.deliveries.push(readFakeAttempt(attempt, log.deliveries.length));
      seen = Math.max(seen, attempts.length);
    },
  };
}
