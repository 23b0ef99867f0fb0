import { randomUUID } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { purchaseKey, STORE_SECRET, signedPurchase } from '../../test/bodies.js';
import { formRequest, HANDLED } from '../../test/deliveries.js';
import { clusterNodes, REDIS_URL, reachRedis, reachRedisCluster } from '../../test/servers.js';
import { createWebhookHandler } from '../handler.js';
import { type RedisClientLike, RedisStore } from './redis.js';

// `waitForReplicas`: Redis WAIT after a claim, a renewal and a commit, on the connection that wrote them (the key's
// master), so what the store answered survives a failover. The shared Redis has no replica, each master of the
// shared cluster one: what a master cannot give is refused, and said so.

const redisUp = await reachRedis();
const clusterUp = await reachRedisCluster();
const PREFIX = `payhook-test:replicas:${process.pid}:`;

const FENCE_MEMORY_MS = 24 * 60 * 60 * 1000;

/** Resolves once the key's lease has ended (its TTL down to the fence's memory): the refusal releases it unawaited. */
async function released(ttl: () => Promise<number>): Promise<void> {
  for (let i = 0; i < 100 && (await ttl()) > FENCE_MEMORY_MS; i++)
    await new Promise((r) => setTimeout(r, 10));
  expect(await ttl()).toBeLessThanOrEqual(FENCE_MEMORY_MS);
}

/**
 * The client, and how many WAITs went through it: in an ioredis pipeline beside the script, or a node-redis command.
 */
function countingWaits(client: RedisClientLike): { counted: RedisClientLike; waits: () => number } {
  let waits = 0;
  const isWait = (value: unknown) => typeof value === 'string' && value.toUpperCase() === 'WAIT';
  const counted = new Proxy(client as object, {
    get(target, name) {
      const value = Reflect.get(target, name, target) as unknown;
      if (typeof value !== 'function') return value;
      if (name === 'pipeline') {
        return (commands: unknown[][]) => {
          if (commands.some((command) => isWait(command[0]))) waits++;
          return value.call(target, commands);
        };
      }
      if (name === 'sendCommand') {
        return (...args: unknown[]) => {
          if (args.flat().some(isWait)) waits++;
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  }) as RedisClientLike;
  return { counted, waits: () => waits };
}

const REFUSED_CLAIM =
  /^\[@payhook\/core\] the duplicate store \(redis\) claimed the notification on its key's master, but (\d+) of the (\d+) replicas waitForReplicas asks for acknowledged it within (\d+) ms: a failover now could lose the claim and let another copy run the handlers at the same time, so it was released and nothing ran; the service's retry is safe\. A master short of replicas \(one down, or a failover not yet followed by the old master's return as a replica\) refuses every claim so: run more replicas per master, or ask for fewer\.$/;

async function handlerOn(store: RedisStore) {
  let runs = 0;
  const errors: { code: string; message: string }[] = [];
  const webhook = createWebhookHandler({
    secret: STORE_SECRET,
    store,
    logger: false,
    onError: (error) => void errors.push({ code: error.code, message: error.message }),
    handle: () => void runs++,
  });
  return { webhook, runs: () => runs, errors };
}

describe('RedisStore waitForReplicas, checked when the store is built', () => {
  const client = { eval: async () => 1 } as unknown as RedisClientLike;
  it.each([
    [{ replicas: 0, timeoutMs: 100 }, 'waitForReplicas.replicas must be a positive integer, not 0.'],
    [{ replicas: 1.5, timeoutMs: 100 }, 'waitForReplicas.replicas must be a positive integer, not 1.5.'],
    [
      { replicas: 1, timeoutMs: 0 },
      'waitForReplicas.timeoutMs must be a number of milliseconds from 1 to 2147483647, not 0.',
    ],
    [
      { replicas: 1 },
      'waitForReplicas.timeoutMs must be a number of milliseconds from 1 to 2147483647, not undefined.',
    ],
    ['1', 'waitForReplicas must be { replicas, timeoutMs }, not "1".'],
  ])('refuses %j', (waitForReplicas, message) => {
    expect(
      () =>
        new RedisStore({
          client,
          waitForReplicas: waitForReplicas as { replicas: number; timeoutMs: number },
        }),
    ).toThrow(`[@payhook/core] ${message}`);
  });

  it('refuses a client it cannot send WAIT with', () => {
    expect(() => new RedisStore({ client, waitForReplicas: { replicas: 1, timeoutMs: 100 } })).toThrow(
      '[@payhook/core] RedisStore with waitForReplicas needs an ioredis client (Redis or Cluster) or a node-redis client or cluster: it sends WAIT on the connection that wrote the key.',
    );
  });
});

describe.skipIf(!redisUp).each(['ioredis', 'node-redis'])(
  'RedisStore waitForReplicas with %s on a Redis without replicas',
  (flavour) => {
    let client: Redis;
    let store: RedisStore;
    let close: () => Promise<unknown>;
    beforeAll(async () => {
      client = new Redis(REDIS_URL);
      if (flavour === 'ioredis') {
        store = new RedisStore({ client, prefix: PREFIX, waitForReplicas: { replicas: 1, timeoutMs: 50 } });
        close = async () => undefined;
      } else {
        const nodeRedis = await createClient({ url: REDIS_URL }).connect();
        store = new RedisStore({
          client: nodeRedis,
          prefix: PREFIX,
          waitForReplicas: { replicas: 1, timeoutMs: 50 },
        });
        close = () => nodeRedis.close();
      }
    });
    afterAll(async () => {
      await close();
      const keys = await client.keys(`${PREFIX}*`);
      if (keys.length > 0) await client.del(...keys);
      client.disconnect();
    });

    it('answers 503 with Retry-After, says the replicas are missing, releases the claim and runs nothing', async () => {
      const { webhook, runs } = await handlerOn(store);
      const paymentId = randomUUID();
      const answer = await webhook(formRequest(signedPurchase(paymentId)), undefined);
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      const error = JSON.parse(answer.body).error;
      expect(error.code).toBe('store.unavailable');
      expect(error.message).toMatch(REFUSED_CLAIM);
      expect(REFUSED_CLAIM.exec(error.message)!.slice(1)).toEqual(['0', '1', '50']);
      expect(runs()).toBe(0);
      // Released: the key keeps its fence, and its lease ended.
      const key = `${PREFIX}${purchaseKey(paymentId)}`;
      expect(await client.get(key)).toMatch(/^1:[0-9a-f]{32}$/);
      expect(await client.pttl(key)).toBeLessThanOrEqual(24 * 60 * 60 * 1000);
      // Without the option the same Redis takes it: the lease was released, so the next claim counts on.
      const plain = new RedisStore({ client, prefix: PREFIX });
      expect(await plain.claim(purchaseKey(paymentId), 1_000)).toMatchObject({ status: 'claimed', fence: 2 });
    });
  },
);

describe.skipIf(!clusterUp).each([
  {
    name: 'an ioredis Cluster',
    async connect(): Promise<{ client: RedisClientLike; close(): Promise<void> }> {
      const client = new Cluster(clusterNodes());
      await new Promise((resolve) => client.once('ready', resolve));
      return { client, close: async () => void client.disconnect() };
    },
  },
  {
    name: 'a node-redis cluster',
    async connect(): Promise<{ client: RedisClientLike; close(): Promise<void> }> {
      const client = createCluster({
        rootNodes: clusterNodes().map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
      });
      await client.connect();
      return { client, close: async () => void (await client.close()) };
    },
  },
])('RedisStore waitForReplicas with $name on the Redis Cluster (one replica per master)', (flavour) => {
  let client: RedisClientLike;
  let close: () => Promise<void>;
  let admin: Cluster;
  const prefix = `${PREFIX}${flavour.name}:`;

  beforeAll(async () => {
    ({ client, close } = await flavour.connect());
    admin = new Cluster(clusterNodes());
  });
  afterAll(async () => {
    for (const node of admin.nodes('master')) {
      for (const key of await node.keys(`${prefix}*`)) await node.del(key);
    }
    admin.disconnect();
    await close();
  });

  it('handles with one replica asked for: the claim and the commit each waited for it', async () => {
    const store = new RedisStore({ client, prefix, waitForReplicas: { replicas: 1, timeoutMs: 1_000 } });
    const { webhook, runs } = await handlerOn(store);
    const body = signedPurchase();
    expect((await webhook(formRequest(body), undefined)).body).toBe(HANDLED);
    expect((await webhook(formRequest(body), undefined)).body).toBe('{"ok":true,"outcome":"duplicate"}');
    expect(runs()).toBe(1);
  });

  it('refuses the claim when two replicas are asked for, on every master', async () => {
    const store = new RedisStore({ client, prefix, waitForReplicas: { replicas: 2, timeoutMs: 50 } });
    // Keys on each of the three masters (their slots differ).
    for (const key of ['a', 'b', 'c'].map((k) => `${k}-${randomUUID()}`)) {
      const error = await store.claim(key, 1_000).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(error?.message).toMatch(REFUSED_CLAIM);
      expect(REFUSED_CLAIM.exec(error!.message)!.slice(1)).toEqual(['1', '2', '50']);
      await released(() => admin.pttl(`${prefix}${key}`));
    }
  });

  it('refuses at once a commit its master holds but too few replicas acknowledged, leaving it done there', async () => {
    const one = new RedisStore({ client, prefix, waitForReplicas: { replicas: 1, timeoutMs: 1_000 } });
    const { counted, waits } = countingWaits(client);
    const two = new RedisStore({ client: counted, prefix, waitForReplicas: { replicas: 2, timeoutMs: 50 } });
    const key = randomUUID();
    const claim = await one.claim(key, 60_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const error = await two.commit(key, claim.token, 60_000).then(
      () => undefined,
      (e: Error) => e,
    );
    // At once: one WAIT, answered short, and the refusal; never sent again for the lease as a failing commit is.
    expect(waits()).toBe(1);
    expect(error?.message).toBe(
      "[@payhook/core] the duplicate store (redis) recorded the handlers' success on the key's master, but 1 of the 2 replicas waitForReplicas asks for acknowledged it within 50 ms: should that master fail before a replica has it, a redelivery runs the handlers again.",
    );
    expect(await admin.get(`${prefix}${key}`)).toBe('done');
  });
});

describe('RedisStore waitForReplicas through a failover, on a client whose master went away', () => {
  /** An ioredis-like client (it has `call` and `pipeline`) whose pipelines fail `failures` times, then answer. */
  function failingThenAnswering(failures: number, answers: [unknown, number]) {
    const sent: unknown[][][] = [];
    const client = {
      eval: async () => undefined,
      call: async () => undefined,
      pipeline: (commands: unknown[][]) => ({
        exec: async () => {
          sent.push(commands);
          if (sent.length <= failures) throw new Error('Connection is closed.');
          return [
            [null, answers[0]],
            [null, answers[1]],
          ];
        },
      }),
    };
    return { client: client as unknown as RedisClientLike, sent };
  }

  it('sends the commit again until it lands and is acknowledged (the promoted replica holds the claim)', async () => {
    const { client, sent } = failingThenAnswering(3, [1, 1]);
    const store = new RedisStore({ client, prefix: 'p:', waitForReplicas: { replicas: 1, timeoutMs: 100 } });
    expect(await store.commit('k', '1:token', 60_000)).toBe(true);
    expect(sent).toHaveLength(4);
    expect(sent.every((commands) => commands[1]![0] === 'wait')).toBe(true);
  });

  it('answers true when a commit sent again finds the key done (the first landed before its answer was lost)', async () => {
    // The script answers 2 for a key that is done already.
    const { client } = failingThenAnswering(1, [2, 1]);
    const store = new RedisStore({ client, prefix: 'p:', waitForReplicas: { replicas: 1, timeoutMs: 100 } });
    expect(await store.commit('k', '1:token', 60_000)).toBe(true);
  });

  it('gives up after the lease the claims asked for, with the last error', async () => {
    const { client, sent } = failingThenAnswering(1_000, [1, 1]);
    const store = new RedisStore({ client, prefix: 'p:', waitForReplicas: { replicas: 1, timeoutMs: 100 } });
    await store.claim('other', 300).catch(() => undefined);
    // The clock and the pauses between tries faked, and advanced by hand: tries at 0, 25, 75, 175 and 375 ms.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const before = sent.length;
      let settled: string | undefined;
      void store.commit('k', '1:token', 60_000).then(
        () => {
          settled = 'committed';
        },
        (error: Error) => {
          settled = error.message;
        },
      );
      await vi.advanceTimersByTimeAsync(299);
      expect([settled, sent.length - before]).toEqual([undefined, 4]);
      await vi.advanceTimersByTimeAsync(76);
      expect([settled, sent.length - before]).toEqual(['Connection is closed.', 5]);
    } finally {
      vi.useRealTimers();
    }
  });
});
