import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterNodes, reachRedisCluster } from '../../../core/test/servers.ts';
import { describeJournal, entry } from '../../test/journal-suite.js';
import { RedisJournal } from './redis.js';

// The journal on the Redis Cluster test:setup starts (three masters, a replica each, 30001–30006): its scripts touch
// several keys (a channel's counter and stream, the channel and token hashes), which a cluster runs only when they
// share a slot, so the prefix must hold a hash tag. Skipped loudly outside CI without the cluster; fails under CI.

const clusterUp = await reachRedisCluster();
let cluster: Cluster | undefined;
const prefixes: string[] = [];
let current = '';

beforeAll(async () => {
  if (!clusterUp) return;
  cluster = new Cluster(clusterNodes());
  await new Promise((resolve) => cluster!.once('ready', resolve));
});

afterAll(async () => {
  if (!cluster) return;
  for (const node of cluster.nodes('master')) {
    for (const prefix of prefixes) for (const key of await node.keys(`${prefix}*`)) await node.del(key);
  }
  cluster.disconnect();
});

function nextPrefix(): string {
  current = `{payhook-relay-cluster-t${process.pid}-${prefixes.length}}:`;
  prefixes.push(current);
  return current;
}

describe.skipIf(!clusterUp)('RedisJournal on a Redis Cluster', () => {
  describeJournal('RedisJournal (Cluster)', {
    open: async (setup) => new RedisJournal({ client: cluster!, prefix: nextPrefix(), ...setup }),
    reopen: async (setup) => new RedisJournal({ client: cluster!, prefix: current, ...setup }),
  });

  it('keeps every key of the default prefix in one slot: a channel created, appended to and read back', async () => {
    const journal = new RedisJournal({ client: cluster! });
    const name = `cluster-default-${process.pid}-${Date.now() % 100_000}`;
    prefixes.push(`{payhook-relay}:ch:${name}`);
    expect(await journal.createChannel({ name, tokenHash: `h-${name}`, createdAt: 1 })).toBe(true);
    expect(await journal.append(name, entry(1))).toBe(1);
    expect((await journal.read(name, 0, 10)).map((e) => e.sequence)).toEqual([1]);
    expect((await journal.findChannelByToken(`h-${name}`))?.name).toBe(name);
    await cluster!.hdel('{payhook-relay}:channels', name);
    await cluster!.hdel('{payhook-relay}:tokens', `h-${name}`);
  });

  it('refuses a prefix without a hash tag on a cluster when built, naming one that works', () => {
    expect(() => new RedisJournal({ client: cluster!, prefix: 'relay:' })).toThrow(
      '[@payhook/relay] prefix must hold a hash tag on Redis Cluster, such as "{relay}:", so that every key of the journal is in one slot, not "relay:".',
    );
  });
});
