import type { DeadNotification, DeadSelection, QueueEngine, WaitingNotification } from '@payhook/queue';
import { UsageError } from './args.js';
import { defineCommand } from './command.js';
import { type CliIO, jsonText, printable } from './io.js';

const QUEUE_HELP = `Usage: payhook queue list|replay|discard|waiting|purge (--database URL | --redis URL) [--queue NAME] [--since ISO] [--all] [--json] [ids…]

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
  --queue NAME      the queue's name (default payhook-notifications)
  --schema S        the PostgreSQL engine's schema (default payhook_queue)
  --prefix P        the BullMQ engine's key prefix in Redis (default bull)
  --since ISO       only those whose last attempt failed (waiting, purge: that were queued) at or after this
                    time (2026-05-01T08:00:00Z)
  --all             list, waiting: every one; replay, discard, purge: all of them (or all --since)
  --json            list, waiting: one JSON object a line
  -h, --help        this help

Examples:
  payhook queue list --database postgres://localhost/shop
  payhook queue replay --database postgres://localhost/shop --all --since 2026-05-01T08:00:00Z
  payhook queue discard --redis redis://localhost:6379 purchase:42:success
  payhook queue purge --redis redis://localhost:6379 --all --since 2026-05-01T08:00:00Z`;

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
  createBullMQQueue?: (options: { connection: string; name?: string; prefix?: string }) => QueueEngine;
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
  queue?: string;
  schema?: string;
  prefix?: string;
}

async function openEngine(values: QueueValues): Promise<QueueEngine> {
  const { database, redis, queue: name, schema, prefix } = values;
  if ((database === undefined) === (redis === undefined)) {
    throw new UsageError('give one engine: --database URL (PostgreSQL) or --redis URL (BullMQ).');
  }
  if (schema !== undefined && database === undefined) throw new UsageError('--schema goes with --database.');
  if (prefix !== undefined && redis === undefined) throw new UsageError('--prefix goes with --redis.');
  const named = name === undefined ? {} : { name };
  if (database !== undefined) {
    const { createPostgresQueue } = await load('database');
    return createPostgresQueue!({ connectionString: database, ...named, ...(schema ? { schema } : {}) });
  }
  const { createBullMQQueue } = await load('redis');
  return createBullMQQueue!({ connection: redis!, ...named, ...(prefix ? { prefix } : {}) });
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
 * (`--database`) or Redis (`--redis`). The engine package is an optional peer, loaded only here.
 *
 * @example
 * const code = await queueCommand(['list', '--database', process.env.DATABASE_URL!], processIO());
 */
export const queueCommand = defineCommand({
  help: QUEUE_HELP,
  options: { text: 'database redis queue schema prefix since', flag: 'all json' },
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
    const engine = await openEngine(values);
    try {
      const json = values.json === true;
      const filter = { ...(since ? { since } : {}), ...(values.all ? { limit: 1e9 } : {}) };
      if (selection === undefined) return await list(engine, action as 'list' | 'waiting', filter, json, io);
      return await act(engine, action as 'replay' | 'discard' | 'purge', selection, io);
    } finally {
      await engine.close();
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
