import type { DedupeStore } from '@payhook/core';
import type { QueueEngine } from '../../src/engine.ts';

/** What a test asks of an engine beyond the defaults: each kit maps these to its engine's own options. */
export interface KitEngineOptions {
  /** Runs of a job before it is dead. @default 5 */
  attempts?: number;
  /** Reach the server through this port on 127.0.0.1 (a proxy the test can cut). */
  port?: number;
  /** Stall detection as in production (tens of seconds), so only an explicit hand-back moves a running job. */
  slowStalls?: boolean;
}

/**
 * An engine under test, as `describeQueueEngine` and the child worker (test/worker-child.ts) build it: each
 * `test/engines/<id>.ts` exports one as `kit`. Engines stall-detect in a few seconds and retry at once (or a few
 * milliseconds apart), so every test finishes in seconds.
 */
export interface EngineKit {
  /** The module's name under test/engines (`bullmq`, `postgres`): the child worker imports it by this. */
  readonly id: string;
  /** For the test titles. */
  readonly title: string;
  /** False when the server is unreachable (a loud skip; under CI=true it throws). */
  reach(): Promise<boolean>;
  /** An engine on the queue `queue`; the suite closes it. */
  makeEngine(queue: string, options?: KitEngineOptions): QueueEngine;
  /** A duplicate store every process of a test shares (the same `prefix` is the same store); `close` ends it. */
  makeStore(prefix: string): Promise<{ store: DedupeStore; close(): Promise<void> }>;
  /** The server, for a proxy in front of it. */
  server(): { host: string; port: number };
  /** Drops what this test process made on the server (schemas, tables), once the suite is done. */
  dispose(): Promise<void>;
}
