import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_SECRET, signedPurchase } from '../../test/bodies.js';
import { DUPLICATE, formRequest, sleep } from '../../test/deliveries.js';
import { PrivateRedisCluster } from '../../test/redis-cluster.js';
import { reachRedis } from '../../test/servers.js';
import { createWebhookHandler, type WebhookHandler } from '../handler.js';
import { RedisStore } from './redis.js';

// RedisStore on a Redis Cluster whose master fails while deliveries run: what payhook answers meanwhile (503 with
// Retry-After, never a false duplicate), and how many handlers run twice with and without waitForReplicas. A private
// cluster of its own (the test kills its nodes); redis-server and redis-cli are what reachRedis needs too.

const redisUp = await reachRedis();

/** A failover's figures, printed for docs/stores.md. */
interface Figures {
  notifications: number;
  copies: number;
  /** Answers other than 200, by status, each with `Retry-After`. */
  refused: Record<string, number>;
  retryAfter: string[];
  falseDuplicates: number;
  lost: number;
  twice: number;
  /** From the kill to the replica answering as master, ms. */
  failoverMs: number;
  /** Notifications whose handlers had run when the master died (the window held open: on it alone). */
  ranBeforeKill?: number;
  /** Why the store was unavailable, as onError heard it: the cause's first words, counted. */
  why: Record<string, number>;
}

/** What `fleet` reports a store failure as: the refusal's own message, or the client's error beneath it. */
function reason(error: Error): string {
  const said = error.message.includes('waitForReplicas')
    ? error.message
    : String((error.cause as Error)?.message);
  if (said.includes('replicas waitForReplicas asks for')) return 'a replica short (waitForReplicas)';
  const step = error.message.includes("recording the handlers' success") ? 'commit: ' : '';
  return step + said.replace(/\d+/g, 'N').slice(0, 60);
}

/**
 * Three webhook instances on `cluster` (each its own client, as three processes), every handler run counted per
 * payment. The clients answer at once while a node is down (no offline queue), as docs/stores.md advises.
 */
function fleet(cluster: PrivateRedisCluster, prefix: string, waitForReplicas: boolean, figures: Figures) {
  const runs = new Map<string, number>();
  const clients: Cluster[] = [];
  const instances: WebhookHandler[] = [];
  for (let i = 0; i < 3; i++) {
    const client = new Cluster(cluster.startupNodes(), {
      enableOfflineQueue: false,
      redisOptions: { maxRetriesPerRequest: 1 },
    });
    client.on('error', () => {});
    clients.push(client);
    const store = new RedisStore({
      client,
      prefix,
      ...(waitForReplicas ? { waitForReplicas: { replicas: 1, timeoutMs: 100 } } : {}),
    });
    instances.push(
      createWebhookHandler({
        secret: STORE_SECRET,
        store,
        logger: false,
        onError: (error) => {
          const why = reason(error);
          figures.why[why] = (figures.why[why] ?? 0) + 1;
        },
        handle: async (n) => {
          runs.set(n.payment_id, (runs.get(n.payment_id) ?? 0) + 1);
          await sleep(5);
        },
      }),
    );
  }
  const ready = Promise.all(clients.map((c) => new Promise((resolve) => c.once('ready', resolve))));
  return { runs, instances, ready, close: () => clients.forEach((c) => void c.disconnect()) };
}

/** Delivers one copy until it is answered 200, as the service retries a refusal; counts what it was answered. */
async function deliver(
  webhook: WebhookHandler,
  paymentId: string,
  body: string,
  runs: Map<string, number>,
  figures: Figures,
): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const answer = await webhook(formRequest(body), undefined);
    if (answer.status === 200) {
      // A duplicate is answered only for a notification whose handlers ran: anything else would lose it.
      if (answer.body === DUPLICATE && !runs.has(paymentId)) figures.falseDuplicates++;
      return;
    }
    figures.refused[answer.status] = (figures.refused[answer.status] ?? 0) + 1;
    const retryAfter = answer.headers['retry-after'] ?? 'none';
    if (!figures.retryAfter.includes(retryAfter)) figures.retryAfter.push(retryAfter);
    if (Date.now() > deadline) throw new Error(`still answered ${answer.status}: ${answer.body}`);
    await sleep(100);
  }
}

/** Runs `tasks`, `lanes` at a time. */
async function inLanes(lanes: number, tasks: (() => Promise<void>)[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < tasks.length) await tasks[next++]!();
    }),
  );
}

function figuresFor(ids: string[]): Figures {
  return {
    notifications: ids.length,
    copies: 2,
    refused: {},
    retryAfter: [],
    falseDuplicates: 0,
    lost: 0,
    twice: 0,
    failoverMs: 0,
    why: {},
  };
}

async function until(condition: () => boolean, what: () => string): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(50);
  if (!condition()) throw new Error(`gave up waiting: ${what()}`);
}

function tally(figures: Figures, runs: Map<string, number>, ids: string[]): Figures {
  figures.lost = ids.filter((id) => !runs.has(id)).length;
  figures.twice = ids.filter((id) => (runs.get(id) ?? 0) > 1).length;
  return figures;
}

/** Waits until another node answers as the master of `slot` than `old`; resolves how long that took. */
async function promoted(
  cluster: PrivateRedisCluster,
  slot: number,
  old: number,
  since: number,
): Promise<number> {
  for (let i = 0; i < 300; i++) {
    const shard = await cluster.shardOf(slot).catch(() => undefined);
    if (shard !== undefined && shard.master !== old) return Date.now() - since;
    await sleep(100);
  }
  throw new Error(`no replica took over slot ${slot} from the master on ${old}`);
}

describe.skipIf(!redisUp)('RedisStore on a Redis Cluster whose master fails', () => {
  let cluster: PrivateRedisCluster;
  const results: Record<string, Figures> = {};

  beforeAll(async () => {
    cluster = await PrivateRedisCluster.start();
  }, 60_000);

  afterAll(async () => {
    await cluster?.dispose();
    console.log(`RedisStore failover figures: ${JSON.stringify(results)}`);
  });

  /**
   * 300 notifications, each delivered twice at once to two of three instances, while the master of a third of the
   * keys is killed; its replica takes over, and the old master, started again, rejoins as its replica.
   */
  async function killWhileDelivering(waitForReplicas: boolean): Promise<Figures> {
    const prefix = `failover:${waitForReplicas}:`;
    const ids = Array.from({ length: 300 }, () => randomUUID());
    const figures = figuresFor(ids);
    const { runs, instances, ready, close } = fleet(cluster, prefix, waitForReplicas, figures);
    await ready;
    // Paced (24 lanes × 25 deliveries, 150 ms apart: 3.75 s at least), so deliveries span the kill at 300 ms and
    // the 2–3 s until the replica takes over however fast the machine answers.
    const tasks = ids.flatMap((id, n) => {
      const body = signedPurchase(id);
      return [0, 1].map(
        (c) => () => sleep(150).then(() => deliver(instances[(n + c) % 3]!, id, body, runs, figures)),
      );
    });
    const { master } = await cluster.shardOf(0);
    const killing = (async () => {
      await sleep(300);
      const killedAt = Date.now();
      await cluster.kill(master);
      figures.failoverMs = await promoted(cluster, 0, master, killedAt);
      await cluster.restart(master);
    })();
    try {
      await inLanes(24, tasks);
      await killing;
    } finally {
      close();
    }
    await cluster.healthy();
    return tally(figures, runs, ids);
  }

  it.each([
    ['without waitForReplicas', false],
    ['with waitForReplicas: { replicas: 1, timeoutMs: 100 }', true],
  ])(
    '%s: answers 503 with Retry-After meanwhile, never a false duplicate, loses nothing',
    async (name, waitForReplicas) => {
      const figures = await killWhileDelivering(waitForReplicas);
      results[`kill while delivering, ${name}`] = figures;
      expect(Object.keys(figures.refused).every((status) => status === '503' || status === '409')).toBe(true);
      expect(figures.refused['503']).toBeGreaterThan(0);
      expect(figures.retryAfter).toEqual(['1']);
      expect(figures.falseDuplicates).toBe(0);
      expect(figures.lost).toBe(0);
      // Loopback replicates within microseconds, so even without WAIT a run twice is rare here; with it, none.
      if (waitForReplicas) expect(figures.twice).toBe(0);
    },
    120_000,
  );

  /**
   * The lost-commit window held open: the replica of the master holding every key (one hash tag) is frozen, so the
   * claims and commits of 20 notifications reach the master alone; then both die, and the replica, started again
   * from its append-only file (without them), is promoted. The second copy of each notification follows.
   */
  async function loseTheReplicasCopy(waitForReplicas: boolean): Promise<Figures> {
    const prefix = `{lost-${waitForReplicas}}:`;
    const ids = Array.from({ length: 20 }, () => randomUUID());
    const figures = figuresFor(ids);
    const { runs, instances, ready, close } = fleet(cluster, prefix, waitForReplicas, figures);
    await ready;
    const slot = Number(
      (await cluster.cli(cluster.startupNodes()[0]!.port, 'cluster', 'keyslot', prefix)).trim(),
    );
    const { master, replicas } = await cluster.shardOf(slot);
    const replica = replicas[0]!;
    try {
      cluster.freeze(replica);
      // The first copies: without WAIT answered 200 by the master alone; with it, refused until a replica has them.
      const first = inLanes(
        20,
        ids.map((id) => () => deliver(instances[0]!, id, signedPurchase(id), runs, figures)),
      );
      // Until every first copy ran on the master alone, or (with WAIT) was refused as often: for want of the
      // replica, or past storeTimeoutMs while the claims before it waited for their WAIT on the one connection.
      const refused = () => (figures.refused['503'] ?? 0) >= ids.length;
      await until(
        () => (waitForReplicas ? refused() : runs.size === ids.length),
        () => `${runs.size} ran, refused ${JSON.stringify(figures.why)}`,
      );
      figures.ranBeforeKill = runs.size;
      await cluster.kill(replica);
      const killedAt = Date.now();
      await cluster.kill(master);
      await cluster.restart(replica);
      figures.failoverMs = await promoted(cluster, slot, master, killedAt);
      await cluster.restart(master);
      await first;
      await cluster.healthy();
      await inLanes(
        20,
        ids.map((id) => () => deliver(instances[1]!, id, signedPurchase(id), runs, figures)),
      );
    } finally {
      close();
    }
    return tally(figures, runs, ids);
  }

  it('without waitForReplicas: every notification the lost master alone acknowledged runs again', async () => {
    const figures = await loseTheReplicasCopy(false);
    results['replica frozen, then both killed, without waitForReplicas'] = figures;
    expect(figures.lost).toBe(0);
    expect(figures.falseDuplicates).toBe(0);
    // A first copy answered while the master was still there ran on its claim alone; the rest waited for the replica.
    expect(figures.ranBeforeKill).toBe(20);
    expect(figures.twice).toBe(20);
  }, 120_000);

  it('with waitForReplicas: none runs twice; the first copies are refused until a replica has them', async () => {
    const figures = await loseTheReplicasCopy(true);
    results['replica frozen, then both killed, with waitForReplicas'] = figures;
    expect(figures.lost).toBe(0);
    expect(figures.falseDuplicates).toBe(0);
    expect(figures.ranBeforeKill).toBe(0);
    expect(figures.twice).toBe(0);
    expect(figures.refused['503']).toBeGreaterThanOrEqual(20);
  }, 120_000);
});
