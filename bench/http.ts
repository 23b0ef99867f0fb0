import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { nextMessage } from './child.js';
import { createDeliverySource, createIdSource, formBody, octokitBody, signOctokit } from './payload.js';
import { HTTP_ROWS, type HttpRow, type ServerCounts } from './servers.js';
import { rotate, type Spread, spread } from './stats.js';

export interface HttpOptions {
  rounds: number;
  /** Seconds of load per row per round. */
  seconds: number;
  /** Seconds of load per row before the first round, not recorded (JIT warm-up). */
  warmupSeconds: number;
  connections: number;
}

/**
 * An HTTP row: requests answered 200 per second of the server process's own CPU time, median and range over the
 * rounds. The server's CPU per request barely moves with what else runs on a shared machine, where its req/s
 * swings with the load; req/s is kept as context.
 */
export interface HttpRowResult extends Spread {
  name: HttpRow;
  unit: 'req/cpu-s';
  /** Requests answered 200 per wall-clock second. */
  rps: Spread;
  /** Median latency of the last round, in milliseconds. */
  latencyP50: number;
  /** Requests the server's application handler ran, against 2xx answers: equal when nothing short-circuited. */
  handled: number;
  answered: number;
  /** The load generator's CPU time over the row's time, highest round: near 1.0 it, not the server, was the limit. */
  generatorCpu: number;
}

const CHILD = fileURLToPath(new URL('./server-child.ts', import.meta.url));
const PATH = '/webhooks';

interface RunningServer {
  row: HttpRow;
  child: ChildProcess;
  port: number;
}

async function spawnServer(row: HttpRow): Promise<RunningServer> {
  // The child loads TypeScript through tsx, with the bench tsconfig (packages resolve to their built dist).
  const child = fork(CHILD, [row], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { port } = await nextMessage<{ port: number }>(child, row);
  return { row, child, port };
}

async function countsOf(server: RunningServer): Promise<ServerCounts> {
  const answer = nextMessage<{ counts: ServerCounts }>(server.child, server.row);
  server.child.send('counts');
  return (await answer).counts;
}

async function stopServer(server: RunningServer): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = once(server.child, 'exit');
  server.child.send('close');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Distinct signed deliveries each connection cycles through. */
const DELIVERIES = 16;

/**
 * Pre-built requests, the same kind for every row: autocannon then sends bytes it built once, where a request
 * rebuilt per send (setupRequest) costs its single-threaded process about 50 µs, enough to make it, not the
 * server, the limit on two cores. The deliveries repeat, so payhook's rows count each one as new with a
 * unique key (see servers.ts): every request is claimed and committed, none answered as a duplicate.
 */
function requestsFor(row: HttpRow): autocannon.Request[] {
  const next = createDeliverySource();
  const bytes = (() => {
    const { data, signature } = next();
    return formBody(data, signature).length;
  })();
  const nextId = createIdSource();
  return Array.from({ length: DELIVERIES }, (): autocannon.Request => {
    if (row === 'node:http + @octokit/webhooks middleware') {
      const id = nextId();
      const body = octokitBody(id, bytes);
      return {
        method: 'POST',
        path: PATH,
        body,
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'issues',
          'x-github-delivery': id,
          'x-hub-signature-256': signOctokit(body),
        },
      };
    }
    const { data, signature } = next();
    return {
      method: 'POST',
      path: PATH,
      body: formBody(data, signature),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    };
  });
}

async function load(server: RunningServer, seconds: number, connections: number): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections,
    duration: seconds,
    requests: requestsFor(server.row),
  });
}

/** Refuses a row whose answers were not all 200 or whose handler did not run for each: it measured the wrong thing. */
function checkRound(
  row: HttpRow,
  result: autocannon.Result,
  before: ServerCounts,
  after: ServerCounts,
): void {
  const refused = after.refused - before.refused;
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0 || refused > 0) {
    throw new Error(
      `${row}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts, ${refused} refused`,
    );
  }
  // The server may run a few more than were answered (requests in flight when the time ran out), never fewer.
  const handled = after.handled - before.handled;
  if (handled < result['2xx']) {
    throw new Error(`${row}: ${result['2xx']} answered 200 but only ${handled} reached the handler`);
  }
}

/**
 * Runs the HTTP rows: every row's server starts in its own child process, is warmed up, then the rows take turns
 * in rotated order for each round, `connections` keep-alive connections each, for a fixed time.
 */
export async function runHttp(options: HttpOptions, log: (line: string) => void): Promise<HttpRowResult[]> {
  const servers: RunningServer[] = [];
  try {
    const started = await Promise.allSettled(HTTP_ROWS.map(spawnServer));
    for (const outcome of started) if (outcome.status === 'fulfilled') servers.push(outcome.value);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
    for (const server of servers) {
      if (options.warmupSeconds > 0) await load(server, options.warmupSeconds, options.connections);
    }
    const rps = new Map<HttpRow, number[]>(HTTP_ROWS.map((row) => [row, []]));
    const perCpu = new Map<HttpRow, number[]>(HTTP_ROWS.map((row) => [row, []]));
    const latency = new Map<HttpRow, number>();
    const generatorCpu = new Map<HttpRow, number>();
    const totals = new Map<HttpRow, { handled: number; answered: number }>(
      HTTP_ROWS.map((row) => [row, { handled: 0, answered: 0 }]),
    );
    for (let round = 0; round < options.rounds; round++) {
      for (const server of rotate(servers, round)) {
        const before = await countsOf(server);
        const cpu = process.cpuUsage();
        const result = await load(server, options.seconds, options.connections);
        const used = process.cpuUsage(cpu);
        const after = await countsOf(server);
        checkRound(server.row, result, before, after);
        rps.get(server.row)!.push(result['2xx'] / (result.duration || options.seconds));
        const serverCpuSeconds = ((after.cpuMicros ?? 0) - (before.cpuMicros ?? 0)) / 1e6;
        perCpu.get(server.row)!.push(result['2xx'] / serverCpuSeconds);
        latency.set(server.row, result.latency.p50);
        const share = (used.user + used.system) / 1e6 / (result.duration || options.seconds);
        generatorCpu.set(server.row, Math.max(generatorCpu.get(server.row) ?? 0, share));
        const total = totals.get(server.row)!;
        total.handled += after.handled - before.handled;
        total.answered += result['2xx'];
        log(
          `  round ${round + 1}: ${server.row}: ${Math.round(result['2xx'] / result.duration)} req/s, ${Math.round(result['2xx'] / serverCpuSeconds)} req per server CPU-second`,
        );
      }
    }
    return HTTP_ROWS.map((row) => ({
      name: row,
      unit: 'req/cpu-s',
      ...spread(perCpu.get(row)!),
      rps: spread(rps.get(row)!),
      latencyP50: latency.get(row) ?? 0,
      generatorCpu: generatorCpu.get(row) ?? 0,
      ...totals.get(row)!,
    }));
  } finally {
    await Promise.all(servers.map(stopServer));
  }
}
