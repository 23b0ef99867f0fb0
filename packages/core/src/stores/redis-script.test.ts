import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { REDIS_URL, reachRedis } from '../../test/servers.js';
import { type RedisClientLike, scriptRunner, waitingScriptRunner } from './redis-script.js';

const redisUp = await reachRedis();

/** Counts the calls of `methods` on `client`, made through its own bound copies (as the runner binds them). */
function counting(client: object, methods: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  const target = client as Record<string, (...args: unknown[]) => unknown>;
  for (const method of methods) {
    const original = target[method]!.bind(client);
    counts[method] = 0;
    target[method] = (...args: unknown[]) => {
      counts[method]!++;
      return original(...args);
    };
  }
  return counts;
}

const FLAVOURS = [
  {
    name: 'ioredis',
    sha: 'evalsha',
    async open() {
      const client = new Redis(REDIS_URL);
      return { client, close: async () => void client.disconnect() };
    },
  },
  {
    name: 'node-redis',
    sha: 'evalSha',
    async open() {
      const client = createClient({ url: REDIS_URL });
      await client.connect();
      return { client, close: async () => void client.destroy() };
    },
  },
];

describe.skipIf(!redisUp).each(FLAVOURS)('scriptRunner with $name', (flavour) => {
  it('sends a script the server lacks once with EVAL, then only its SHA-1', async () => {
    const { client, close } = await flavour.open();
    try {
      const counts = counting(client, ['eval', flavour.sha]);
      const run = scriptRunner(client as RedisClientLike, 'a test');
      // A script no server has seen: the first EVALSHA is answered NOSCRIPT.
      const script = `-- ${randomUUID()}\nreturn ARGV[1] .. KEYS[1]`;
      expect(await run(script, ['key'], ['a '])).toBe('a key');
      expect(await run(script, ['other'], ['b '])).toBe('b other');
      expect(await run(script, ['third'], ['c '])).toBe('c third');
      expect(counts).toEqual({ eval: 1, [flavour.sha]: 3 });
    } finally {
      await close();
    }
  });

  it("passes on the script's own error, without sending the script again", async () => {
    const { client, close } = await flavour.open();
    try {
      const counts = counting(client, ['eval', flavour.sha]);
      const run = scriptRunner(client as RedisClientLike, 'a test');
      const script = `-- ${randomUUID()}\nreturn redis.error_reply('BOOM the script failed')`;
      await expect(run(script, ['key'], [])).rejects.toThrow('BOOM the script failed');
      await expect(run(script, ['key'], [])).rejects.toThrow('BOOM the script failed');
      expect(counts).toEqual({ eval: 1, [flavour.sha]: 2 });
    } finally {
      await close();
    }
  });
});

describe('scriptRunner', () => {
  it('sends the script with EVAL every time to a client without EVALSHA, in its own calling convention', async () => {
    const calls: unknown[][] = [];
    const ioredisLike = { call() {}, eval: async (...args: unknown[]) => void calls.push(args) };
    const nodeRedisLike = { eval: async (...args: unknown[]) => void calls.push(args) };
    await scriptRunner(ioredisLike, 'a test')('return 1', ['k1', 'k2'], ['a']);
    await scriptRunner(nodeRedisLike, 'a test')('return 1', ['k1'], ['a', 'b']);
    expect(calls).toEqual([
      ['return 1', 2, 'k1', 'k2', 'a'],
      ['return 1', { keys: ['k1'], arguments: ['a', 'b'] }],
    ]);
  });

  it.each([
    ['renamed away', "ERR unknown command 'EVALSHA', with args beginning with: '1f0e' '1' 'k1' "],
    ['forbidden by an ACL', "NOPERM User app has no permissions to run the 'evalsha' command"],
  ])(
    'runs scripts with EVAL from then on when the server refuses EVALSHA itself (%s)',
    async (_, refusal) => {
      const calls: string[] = [];
      const client = {
        evalSha: async () => {
          calls.push('evalSha');
          throw new Error(refusal);
        },
        eval: async (script: string) => {
          calls.push('eval');
          return script;
        },
      };
      const run = scriptRunner(client, 'a test');
      expect(await run('return 1', ['k1'], [])).toBe('return 1');
      expect(await run('return 2', ['k1'], [])).toBe('return 2');
      expect(calls).toEqual(['evalSha', 'eval', 'eval']);
    },
  );

  it('passes on any other error of EVALSHA without sending the script', async () => {
    const calls: string[] = [];
    const client = {
      evalSha: async () => {
        calls.push('evalSha');
        throw new Error("READONLY You can't write against a read only replica.");
      },
      eval: async () => void calls.push('eval'),
    };
    await expect(scriptRunner(client, 'a test')('return 1', ['k1'], [])).rejects.toThrow(/^READONLY/);
    expect(calls).toEqual(['evalSha']);
  });

  it('refuses something that is not a Redis client, naming who needs it', () => {
    expect(() => scriptRunner({} as RedisClientLike, 'RedisWatchStore')).toThrow(
      '[@payhook/core] RedisWatchStore needs a Redis client with eval: pass an ioredis or node-redis client.',
    );
  });
});

describe('scriptRunner after a failover', () => {
  it('sends the script with EVAL when an ioredis Cluster met NOSCRIPT on a promoted replica at the end of its redirections', async () => {
    const calls: string[] = [];
    const client = {
      call: () => undefined,
      evalsha: async () => {
        calls.push('evalsha');
        throw new Error(
          'Too many Cluster redirections. Last error: ReplyError: NOSCRIPT No matching script. Please use EVAL.',
        );
      },
      eval: async () => {
        calls.push('eval');
        return 'ran';
      },
    };
    const run = scriptRunner(client as unknown as RedisClientLike, 'a test');
    expect(await run('return 1', ['key'], [])).toBe('ran');
    expect(calls).toEqual(['evalsha', 'eval']);
  });
});

describe('waitingScriptRunner', () => {
  /** An ioredis-like client whose pipelines record their first command and answer `answer(command)`. */
  function pipelining(answer: (name: string) => [Error | null, unknown]) {
    const sent: string[] = [];
    const client = {
      call: () => undefined,
      eval: async () => undefined,
      pipeline: (commands: unknown[][]) => ({
        exec: async () => {
          const name = String(commands[0]![0]);
          sent.push(`${name} + ${commands[1]![0]}`);
          return [answer(name), [null, 1]];
        },
      }),
    };
    return { client: client as unknown as RedisClientLike, sent };
  }

  it('sends the script with EVAL from then on when the server refuses EVALSHA itself, WAIT with it each time', async () => {
    const refused = new Error("ERR unknown command 'evalsha', with args beginning with: ");
    const { client, sent } = pipelining((name) => (name === 'evalsha' ? [refused, null] : [null, 'ran']));
    const run = waitingScriptRunner(client, 'a test')!;
    expect(await run('return 1', ['k'], [], { replicas: 1, timeoutMs: 10 })).toEqual(['ran', 1]);
    expect(await run('return 1', ['k'], [], { replicas: 1, timeoutMs: 10 })).toEqual(['ran', 1]);
    expect(sent).toEqual(['evalsha + wait', 'eval + wait', 'eval + wait']);
  });

  it('is undefined for a client it cannot send WAIT with', () => {
    expect(
      waitingScriptRunner({ eval: async () => 1 } as unknown as RedisClientLike, 'a test'),
    ).toBeUndefined();
  });
});
