import { createHash } from 'node:crypto';

/**
 * The part of a Redis client the stores use. Both an `ioredis` client (`new Redis(url)`, or a `Cluster`) and a
 * node-redis v4/v5 client (`createClient({ url })`, connected) fit it: they differ in how options are passed,
 * which the store detects (ioredis has `call`).
 *
 * @example
 * const client: RedisClientLike = new Redis(process.env.REDIS_URL!);
 */
export interface RedisClientLike {
  eval(...args: never[]): Promise<unknown>;
}

/** Runs one of a store's Lua scripts on the keys and arguments given; resolves what the script returned. */
export type RunScript = (
  script: string,
  keys: readonly string[],
  args: readonly string[],
) => Promise<unknown>;

type Call = (...args: unknown[]) => Promise<unknown>;

/**
 * Runs a script, then `WAIT replicas timeoutMs` on the connection that ran it (a cluster's: the master of the key):
 * resolves what the script returned and how many replicas acknowledged every write made on that connection so far.
 */
export type RunScriptAndWait = (
  script: string,
  keys: readonly string[],
  args: readonly string[],
  wait: { readonly replicas: number; readonly timeoutMs: number },
) => Promise<[unknown, number]>;

const digests = new Map<string, string>();

function sha1(script: string): string {
  let digest = digests.get(script);
  if (digest === undefined) {
    digest = createHash('sha1').update(script).digest('hex');
    digests.set(script, digest);
  }
  return digest;
}

function messageOf(error: unknown): string {
  return String((error as { message?: unknown })?.message);
}

/** NOSCRIPT, alone or as the last error an ioredis Cluster met following a slot to a promoted replica. */
function isNoScript(error: unknown): boolean {
  return /^NOSCRIPT|Last error: ReplyError: NOSCRIPT/.test(messageOf(error));
}

/** A cluster node's answer that the key's slot is served elsewhere (now, or while it migrates). */
function isRedirect(error: unknown): boolean {
  return /^(MOVED|ASK) /.test(messageOf(error));
}

/** EVALSHA itself refused (renamed away, or left out of the user's ACL), where EVAL may run: nothing ran. */
function isShaRefused(error: unknown): boolean {
  const message = messageOf(error);
  return /^(ERR unknown command|NOPERM)/i.test(message) && /evalsha/i.test(message);
}

/**
 * Runs scripts by their SHA-1 (`EVALSHA`), and with `EVAL` when the server does not hold the script yet (a new,
 * restarted or flushed server answers NOSCRIPT), which also loads it. Sending the script's text on every call, as
 * plain `EVAL` does, costs each call its bytes and the server a hash of them. A client without `evalsha` (ioredis)
 * or `evalSha` (node-redis), or a server that refuses EVALSHA itself (renamed, or not in the ACL), gets `EVAL`
 * every time.
 */
export function scriptRunner(client: RedisClientLike, who: string): RunScript {
  if (typeof client?.eval !== 'function') {
    throw new TypeError(
      `[@payhook/core] ${who} needs a Redis client with eval: pass an ioredis or node-redis client.`,
    );
  }
  const methods = client as unknown as Record<string, unknown>;
  const ioredis = typeof methods.call === 'function';
  const evalOf = (client.eval as Call).bind(client);
  const shaMethod = ioredis ? methods.evalsha : methods.evalSha;
  const evalShaOf = typeof shaMethod === 'function' ? (shaMethod as Call).bind(client) : undefined;
  const send = (call: Call, script: string, keys: readonly string[], args: readonly string[]) =>
    ioredis ? call(script, keys.length, ...keys, ...args) : call(script, { keys, arguments: args });
  let bySha = evalShaOf !== undefined;
  return (script, keys, args) => {
    if (!bySha || !evalShaOf) return send(evalOf, script, keys, args);
    return send(evalShaOf, sha1(script), keys, args).catch((error: unknown) => {
      if (isShaRefused(error)) bySha = false;
      else if (!isNoScript(error)) throw error;
      return send(evalOf, script, keys, args);
    });
  };
}

interface Pipelining {
  pipeline(commands: unknown[][]): { exec(): Promise<[Error | null, unknown][] | null> };
}

/**
 * `RunScriptAndWait` for the client given, or `undefined` when it cannot send WAIT on the key's connection. An ioredis
 * client (one Redis or a `Cluster`) sends the script and WAIT in one pipeline, which a cluster sends to the key's
 * master; a node-redis client sends WAIT once the script answered, on its one connection, and a node-redis cluster
 * sends it to the key's master (`sendCommand` routed by the key).
 */
export function waitingScriptRunner(client: RedisClientLike, who: string): RunScriptAndWait | undefined {
  const methods = client as unknown as Record<string, unknown>;
  if (typeof methods.call === 'function') {
    if (typeof methods.pipeline !== 'function') return undefined;
    const pipelining = client as unknown as Pipelining;
    const send = async (head: unknown[], keys: readonly string[], args: readonly string[], wait: Wait) => {
      const command = [...head, keys.length, ...keys, ...args];
      const results = await pipelining.pipeline([command, ['wait', wait.replicas, wait.timeoutMs]]).exec();
      const [[scriptError, answer] = [null, undefined], [waitError, acked] = [null, 0]] = results ?? [];
      return { scriptError, answer, waitError, acked };
    };
    // A Cluster follows MOVED and ASK for a pipeline only when every command got it, never with WAIT's answer beside
    // it: the slots are read again here, and the pipeline sent to the key's new master, as for a lone command.
    const refresh = methods.refreshSlotsCache as ((done: () => void) => void) | undefined;
    let bySha = true;
    return async (script, keys, args, wait) => {
      let head: unknown[] = bySha ? ['evalsha', sha1(script)] : ['eval', script];
      for (let redirects = 0; ; redirects++) {
        const sent = await send(head, keys, args, wait);
        if (head[0] === 'evalsha' && (isNoScript(sent.scriptError) || isShaRefused(sent.scriptError))) {
          if (isShaRefused(sent.scriptError)) bySha = false;
          head = ['eval', script];
          continue;
        }
        if (isRedirect(sent.scriptError) && typeof refresh === 'function' && redirects < 3) {
          await new Promise<void>((done) => refresh.call(client, () => done()));
          continue;
        }
        if (sent.scriptError) throw sent.scriptError;
        if (sent.waitError) throw sent.waitError;
        return [sent.answer, Number(sent.acked)];
      }
    };
  }
  const sendCommand = methods.sendCommand;
  if (typeof sendCommand !== 'function') return undefined;
  const run = scriptRunner(client, who);
  const cluster = typeof methods.getSlotMaster === 'function';
  return async (script, keys, args, wait) => {
    const answer = await run(script, keys, args);
    const command = ['WAIT', String(wait.replicas), String(wait.timeoutMs)];
    const acked = await (cluster
      ? (sendCommand as Call).call(client, keys[0], false, command)
      : (sendCommand as Call).call(client, command));
    return [answer, Number(acked)];
  };
}

type Wait = { readonly replicas: number; readonly timeoutMs: number };
