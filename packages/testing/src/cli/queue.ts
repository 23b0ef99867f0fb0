import type { DeadNotification, DeadSelection, QueueEngine, WaitingNotification } from '@payhook/queue';
import { UsageError } from './args.js';
import { defineCommand } from './command.js';
import { type CliIO, jsonText, printable } from './io.js';

const QUEUE_HELP = `Usage: payhook queue list|replay|discard|waiting|purge (--database URL | --redis URL | --redis-cluster URL…) [--queue NAME] [--since ISO] [--all] [--json] [ids…]

The dead notifications of @payhook/queue: those whose job failed every attempt.
  list      one line per dead notification, oldest first: id, key, error code, attempts, failed at, message,
            and the reason when the worker's failureReason gave one (never the notification beyond its key);
            the first 100 unless --all
  replay    queue them again (attempts reset; the handlers that succeeded before do not run again)
  discard   delete them for good (a new delivery of the notification is then queued again)
replay and discard take the ids (or keys) that list prints, or --all (with --since: those that failed since then).

The waiting notifications: queued and not running (waiting for a worker, or for their next attempt).
  waiting   one line per waiting notification, oldest first: id, key, attempts made, queued at; the first 100
            unless --all
  purge     delete them before any worker runs them (a running one is left alone; a new delivery of the
            notification is then queued again): the ids (or keys) that waiting prints, or --all (with --since:
            those queued since then)

Options:
  --database URL    the PostgreSQL engine (@payhook/queue/postgres, needs pg-boss)
  --redis URL       the BullMQ engine (@payhook/queue/bullmq, needs bullmq)
  --redis-cluster URL
                    the BullMQ engine on Redis Cluster (needs bullmq and ioredis): a node's URL, the flag repeated or
                    the URLs comma-separated for more (ioredis finds the others); the first URL's user, password and
                    rediss:// go to every node
  --queue NAME      the queue's name (default payhook-notifications)
  --schema S        the PostgreSQL engine's schema (default payhook_queue)
  --prefix P        the BullMQ engine's key prefix in Redis (default bull; on a cluster {bull}, and one given
                    must hold a hash tag such as {shop})
  --since ISO       only those whose last attempt failed (waiting, purge: that were queued) at or after this
                    time (2026-05-01T08:00:00Z)
  --all             list, waiting: every one; replay, discard, purge: all of them (or all --since)
  --json            list, waiting: one JSON object a line
  -h, --help        this help

Examples:
  payhook queue list --database postgres://localhost/shop
  payhook queue replay --database postgres://localhost/shop --all --since 2026-05-01T08:00:00Z
  payhook queue discard --redis redis://localhost:6379 purchase:42:success
  payhook queue purge --redis redis://localhost:6379 --all --since 2026-05-01T08:00:00Z
  payhook queue list --redis-cluster redis://redis-0:6379,redis://redis-1:6379`;

const ACTIONS = ['list', 'replay', 'discard', 'waiting', 'purge'] as const;
type Action = (typeof ACTIONS)[number];

/** The engine modules, by the flag that selects them; optional peers, loaded only when asked for. */
const ENGINES = {
  database: { module: '@payhook/queue/postgres', needs: '@payhook/queue pg-boss pg' },
  redis: { module: '@payhook/queue/bullmq', needs: '@payhook/queue bullmq' },
} as const;

interface EngineModules {
  createPostgresQueue?: (options: {
    connectionString: string;
    name?: string;
    schema?: string;
  }) => QueueEngine;
  createBullMQQueue?: (options: {
    connection: string | ClusterLike;
    name?: string;
    prefix?: string;
  }) => QueueEngine;
}

async function load(kind: keyof typeof ENGINES): Promise<EngineModules> {
  const { module, needs } = ENGINES[kind];
  try {
    return (await import(module)) as EngineModules;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Not installed, or a @payhook/queue without this engine's subpath.
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw error;
    throw new Error(`--${kind} needs ${module}, which could not be loaded: npm install ${needs}`);
  }
}

interface QueueValues {
  database?: string;
  redis?: string;
  'redis-cluster'?: string[];
  queue?: string;
  schema?: string;
  prefix?: string;
}

/** An engine and what closes it: the engine, then the cluster client the CLI made for it (the engine leaves it open). */
interface OpenEngine {
  readonly engine: QueueEngine;
  close(): Promise<void>;
}

async function openEngine(values: QueueValues): Promise<OpenEngine> {
  const { database, redis, queue: name, schema, prefix } = values;
  const cluster = values['redis-cluster'];
  if ([database, redis, cluster].filter((given) => given !== undefined).length !== 1) {
    throw new UsageError(
      'give one engine: --database URL (PostgreSQL), or --redis URL or --redis-cluster URL (BullMQ).',
    );
  }
  if (schema !== undefined && database === undefined) throw new UsageError('--schema goes with --database.');
  if (prefix !== undefined && database !== undefined)
    throw new UsageError('--prefix goes with --redis or --redis-cluster.');
  const named = name === undefined ? {} : { name };
  if (database !== undefined) {
    const { createPostgresQueue } = await load('database');
    return closing(
      createPostgresQueue!({ connectionString: database, ...named, ...(schema ? { schema } : {}) }),
    );
  }
  if (cluster !== undefined) return openOnCluster(cluster, prefix, named);
  const { createBullMQQueue } = await load('redis');
  return closing(createBullMQQueue!({ connection: redis!, ...named, ...(prefix ? { prefix } : {}) }));
}

function closing(engine: QueueEngine): OpenEngine {
  return { engine, close: () => engine.close() };
}

/**
 * The BullMQ engine on an ioredis `Cluster` of the nodes given (each flag one URL or several, comma-separated), its
 * prefix `{bull}` unless given, and then with a hash tag (BullMQ's scripts need every key of the queue in one slot).
 */
async function openOnCluster(
  given: string[],
  prefix: string | undefined,
  named: { name?: string },
): Promise<OpenEngine> {
  const urls = given.flatMap((value) => value.split(',')).map((value) => value.trim());
  const parsed = urls.filter((url) => url !== '').map(redisUrl);
  if (parsed.length === 0) throw new UsageError('--redis-cluster needs the URL of a node of the cluster.');
  if (prefix !== undefined && !/\{[^}]+\}/.test(prefix)) {
    throw new UsageError(
      `--prefix must hold a hash tag on Redis Cluster, such as ${JSON.stringify(`{${prefix}}`)}, so that every key of the queue is in one slot, not ${JSON.stringify(prefix)}.`,
    );
  }
  const { createBullMQQueue } = await load('redis');
  const Cluster = await loadCluster();
  const [first] = parsed;
  const cluster = new Cluster(
    parsed.map((url) => ({ host: url.hostname, port: Number(url.port || 6379) })),
    {
      redisOptions: {
        ...(first!.username ? { username: decodeURIComponent(first!.username) } : {}),
        ...(first!.password ? { password: decodeURIComponent(first!.password) } : {}),
        ...(first!.protocol === 'rediss:' ? { tls: {} } : {}),
        maxRetriesPerRequest: null,
      },
    },
  );
  try {
    const engine = createBullMQQueue!({ connection: cluster, ...named, ...(prefix ? { prefix } : {}) });
    return { engine, close: () => engine.close().finally(() => cluster.disconnect()) };
  } catch (error) {
    cluster.disconnect();
    throw error;
  }
}

/** A `redis://` or `rediss://` URL; refused without echoing its credentials. */
function redisUrl(text: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    // Said below without the text, which may hold a password.
  }
  if (url?.protocol === 'redis:' || url?.protocol === 'rediss:') return url;
  const shown =
    url === undefined ? 'a text that is not a URL' : JSON.stringify(`${url.protocol}//${url.host}`);
  throw new UsageError(`--redis-cluster takes redis:// or rediss:// URLs, not ${shown}.`);
}

type ClusterClass = new (
  nodes: { host: string; port: number }[],
  options: { redisOptions: Record<string, unknown> },
) => ClusterLike;

/** What the CLI needs of an ioredis `Cluster`, and what BullMQ takes as its connection. */
interface ClusterLike {
  readonly isCluster: true;
  disconnect(): void;
}

/** ioredis, which bullmq depends on: its `Cluster`, loaded only for --redis-cluster. */
async function loadCluster(): Promise<ClusterClass> {
  try {
    return ((await import('ioredis')) as unknown as { Cluster: ClusterClass }).Cluster;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new Error(
      '--redis-cluster needs ioredis, which could not be loaded: npm install @payhook/queue bullmq ioredis',
    );
  }
}

function sinceFrom(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const since = new Date(value);
  if (Number.isNaN(since.getTime()))
    throw new UsageError(`--since ${JSON.stringify(value)} is not an ISO time.`);
  return since;
}

function selectionFrom(
  ids: string[],
  all: boolean | undefined,
  since: Date | undefined,
  which: string,
): DeadSelection {
  if (ids.length > 0 && all) throw new UsageError('give ids or --all, not both.');
  if (ids.length > 0) {
    if (since) throw new UsageError('--since goes with --all, not with ids.');
    return { ids };
  }
  if (!all) throw new UsageError(`name the ${which} (ids or keys), or pass --all.`);
  return since ? { all: true, since } : { all: true };
}

function waitingLine(waiting: WaitingNotification, json: boolean | undefined): string {
  const fields = {
    id: waiting.id,
    key: waiting.job.key ?? null,
    attempts: waiting.attempts,
    queuedAt: waiting.queuedAt.toISOString(),
  };
  if (json) return jsonText(fields);
  const { id, key, attempts, queuedAt } = fields;
  return [id, key ?? '-', `attempts=${attempts}`, queuedAt].map(printable).join('\t');
}

function line(dead: DeadNotification, json: boolean | undefined): string {
  const fields = {
    id: dead.id,
    key: dead.job.key ?? null,
    code: dead.error.code ?? null,
    message: dead.error.message,
    reason: dead.error.reason ?? null,
    attempts: dead.attempts,
    queuedAt: dead.queuedAt.toISOString(),
    failedAt: dead.failedAt.toISOString(),
  };
  if (json) return jsonText(fields);
  const { id, key, code, attempts, failedAt, message, reason } = fields;
  // Each field on its own: a tab or a newline in a key must not read as the next column or the next line.
  const columns = [id, key ?? '-', code ?? '-', `attempts=${attempts}`, failedAt, message];
  return (reason === null ? columns : [...columns, `reason: ${reason}`]).map(printable).join('\t');
}

/**
 * `payhook queue list|replay|discard`: the dead notifications of a `@payhook/queue` engine, on PostgreSQL
 * (`--database`), Redis (`--redis`) or Redis Cluster (`--redis-cluster`). The engine package is an optional peer, loaded only here.
 *
 * @example
 * const code = await queueCommand(['list', '--database', process.env.DATABASE_URL!], processIO());
 */
export const queueCommand = defineCommand({
  help: QUEUE_HELP,
  options: { text: 'database redis queue schema prefix since', list: 'redis-cluster', flag: 'all json' },
  positionals: true,
  run: async ({ values, positionals }, io) => {
    const [action, ...ids] = positionals;
    if (!ACTIONS.includes(action as Action)) {
      throw new UsageError(
        `the action is list, replay, discard, waiting or purge, not ${JSON.stringify(action ?? '')}.`,
      );
    }
    const since = sinceFrom(values.since);
    const listing = action === 'list' || action === 'waiting';
    if (listing && ids.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(ids[0])}.`);
    const which = action === 'purge' ? 'waiting notifications to purge' : 'dead notifications to act on';
    const selection = listing ? undefined : selectionFrom(ids, values.all, since, which);
    if (values.json && !listing) throw new UsageError('--json goes with list and waiting.');
    const opened = await openEngine(values);
    const { engine } = opened;
    try {
      const json = values.json === true;
      const filter = { ...(since ? { since } : {}), ...(values.all ? { limit: 1e9 } : {}) };
      if (selection === undefined) return await list(engine, action as 'list' | 'waiting', filter, json, io);
      return await act(engine, action as 'replay' | 'discard' | 'purge', selection, io);
    } finally {
      await opened.close();
    }
  },
});

/** `list` (the dead notifications) or `waiting`: one line each, the count on standard error. */
async function list(
  engine: QueueEngine,
  action: 'list' | 'waiting',
  filter: { since?: Date; limit?: number },
  json: boolean,
  io: CliIO,
): Promise<number> {
  const lines =
    action === 'waiting'
      ? (await engine.waiting(filter)).map((waiting) => waitingLine(waiting, json))
      : (await engine.dead(filter)).map((dead) => line(dead, json));
  for (const printed of lines) io.stdout(printed);
  const kind = action === 'waiting' ? 'waiting' : 'dead';
  io.stderr(`${lines.length} ${kind} notification${lines.length === 1 ? '' : 's'}`);
  return 0;
}

/** `replay`, `discard` (dead notifications) or `purge` (waiting ones): how many, and 1 when some ids named none. */
async function act(
  engine: QueueEngine,
  action: 'replay' | 'discard' | 'purge',
  selection: DeadSelection,
  io: CliIO,
): Promise<number> {
  const done = { replay: 'replayed', discard: 'discarded', purge: 'purged' }[action];
  const count = await engine[action](selection);
  io.stdout(`${done} ${count}`);
  return unmatched(io, selection, count, action === 'purge' ? 'waiting' : 'dead');
}

/** 1, saying how many, when some of the ids given named no notification of that kind; else 0. */
function unmatched(io: CliIO, selection: DeadSelection, count: number, kind: 'dead' | 'waiting'): number {
  if (!('ids' in selection) || count >= selection.ids.length) return 0;
  io.stderr(`${selection.ids.length - count} of the ids given are not ${kind} notifications of this queue.`);
  return 1;
}
