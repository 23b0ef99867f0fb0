// The relay rows: the latency a relay adds on loopback, how fast a client catches up a backlog, and whether the
// file journal stays on disk (the relay's RSS with 100,000 deliveries journaled against 1,000).
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileJournal } from '@payhook/relay/file';
import { encodeData, formBody, signData } from './payload.js';

const RELAY_BIN = fileURLToPath(new URL('../packages/relay/bin/payhook-relay.js', import.meta.url));
const CLI = fileURLToPath(new URL('../packages/testing/dist/cli.js', import.meta.url));
const SIGNING_SECRET = 'bench-signing-secret-0123456789abcdef';
const ADMIN = 'bench-admin-token-0123456789';

export interface RelayBenchOptions {
  /** Deliveries sent one at a time for the latency rows. */
  latencyDeliveries: number;
  /** The backlog a stopped client catches up. */
  backlog: number;
  /** The two journal sizes whose RSS is compared. */
  rss: [number, number];
}

/** One figure with its unit and, where the issue sets one, its target. */
export interface RelayRow {
  name: string;
  value: number;
  unit: string;
  target?: string;
  pass?: boolean;
}

function row(name: string, value: number, unit: string, op?: '<=' | '>=', limit?: number): RelayRow {
  if (op === undefined || limit === undefined) return { name, value, unit };
  return { name, value, unit, target: `${op} ${limit}`, pass: op === '<=' ? value <= limit : value >= limit };
}

/** The service's delivery of purchase `n`: the 1.2 KB notification of the other rows, its own order id. */
function body(n: number): string {
  const data = encodeData(`00000000-0000-4000-8000-${String(n).padStart(12, '0')}`);
  return formBody(data, signData(data));
}

function sha(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('base64url');
}

/** The app: answers 200 to each POST and notes when each body (by its SHA-256) arrived. */
async function startApp(): Promise<{ url: string; arrived: Map<string, number>; server: Server }> {
  const arrived = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      arrived.set(sha(Buffer.concat(chunks)), performance.now());
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"outcome":"handled"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, arrived, server };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The built bin on a file journal in `directory`; resolves once it listens. */
async function startRelay(directory: string): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [RELAY_BIN, '--port', String(port), '--host', '127.0.0.1', '--journal', directory],
    {
      env: { ...process.env, PAYHOOK_RELAY_SIGNING_SECRET: SIGNING_SECRET, PAYHOOK_RELAY_ADMIN_TOKEN: ADMIN },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening on')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`payhook-relay exited ${code}`)));
  });
  return { child, base: `http://127.0.0.1:${port}` };
}

async function createChannel(
  base: string,
  name: string,
): Promise<{ token: string; connectUrl: string; serverUrl: string }> {
  const response = await fetch(`${base}/channels`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (response.status !== 201) throw new Error(`channel ${name}: ${response.status}`);
  return (await response.json()) as { token: string; connectUrl: string; serverUrl: string };
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux; clock ticks of 10 ms). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** `payhook relay connect` as a developer runs it (the built CLI), until `stop`. */
function startClient(
  connectUrl: string,
  token: string,
  forwardTo: string,
  cursor: string,
): { pid: number; stop: () => Promise<void> } {
  const child = spawn(
    process.execPath,
    [CLI, 'relay', 'connect', connectUrl, '--forward-to', forwardTo, '--cursor-file', cursor],
    { env: { ...process.env, PAYHOOK_RELAY_TOKEN: token }, stdio: ['ignore', 'ignore', 'ignore'] },
  );
  return {
    pid: child.pid!,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function post(url: string, text: string): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: text,
  });
  await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
}

async function until(done: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`${what}: not done within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Latency of each delivery from the sender's POST to the app, one at a time, through `target`. */
async function latencies(target: string, app: { arrived: Map<string, number> }, count: number, from: number) {
  const ms: number[] = [];
  for (let n = from; n < from + count; n++) {
    const text = body(n);
    const key = sha(text);
    const started = performance.now();
    await post(target, text);
    await until(() => app.arrived.has(key), 10_000, `delivery ${n}`);
    ms.push(app.arrived.get(key)! - started);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return ms;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** RSS of a process, from /proc (Linux). */
function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  if (!line) throw new Error(`no VmRSS for ${pid}`);
  return Number(line[1]) * 1024;
}

/** Added latency: sender → relay → client → app, against sender → app directly, one delivery at a time. */
async function measureLatency(options: RelayBenchOptions, work: string, log: (line: string) => void) {
  const app = await startApp();
  const { child, base } = await startRelay(join(work, 'latency'));
  const channel = await createChannel(base, 'latency');
  const { stop } = startClient(channel.connectUrl, channel.token, app.url, join(work, 'latency.cursor'));
  try {
    await latencies(channel.serverUrl, app, 20, 1_000_000);
    const direct = await latencies(app.url, app, options.latencyDeliveries, 1);
    const relayed = await latencies(channel.serverUrl, app, options.latencyDeliveries, 2_000_000);
    log(`relay: ${options.latencyDeliveries} deliveries each way, one at a time`);
    const added = (p: number) => percentile(relayed, p) - percentile(direct, p);
    return [
      row('relay added latency p50 (loopback, file journal with fdatasync)', added(50), 'ms', '<=', 5),
      row('relay added latency p99', added(99), 'ms', '<=', 50),
      row('sender → app through the relay, p50 (context)', percentile(relayed, 50), 'ms'),
      row('sender → app directly, p50 (context)', percentile(direct, 50), 'ms'),
    ];
  } finally {
    await stop();
    child.kill('SIGTERM');
    app.server.close();
  }
}

/** Catch-up: a backlog journaled while the client was stopped, forwarded once it starts, in deliveries/s. */
async function measureCatchUp(options: RelayBenchOptions, work: string, log: (line: string) => void) {
  const app = await startApp();
  const { child, base } = await startRelay(join(work, 'backlog'));
  const channel = await createChannel(base, 'backlog');
  try {
    let next = 1;
    const sender = async () => {
      while (next <= options.backlog) await post(channel.serverUrl, body(next++));
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: 20 }, sender));
    const journaledPerSecond = options.backlog / ((performance.now() - started) / 1000);
    log(`relay: ${options.backlog} journaled at ${Math.round(journaledPerSecond)}/s; the client catches up`);
    const caughtUp = performance.now();
    const relayCpu = cpuSeconds(child.pid!);
    const client = startClient(channel.connectUrl, channel.token, app.url, join(work, 'backlog.cursor'));
    await until(() => app.arrived.size >= options.backlog, 300_000, 'catch-up');
    const perSecond = options.backlog / ((performance.now() - caughtUp) / 1000);
    const cpu = { client: cpuSeconds(client.pid), relay: cpuSeconds(child.pid!) - relayCpu };
    await client.stop();
    return [
      row(
        "catch-up: client CPU per delivery (context: wall time follows the machine's load)",
        (cpu.client / options.backlog) * 1000,
        'ms',
      ),
      row('catch-up: relay CPU per delivery streamed (context)', (cpu.relay / options.backlog) * 1000, 'ms'),
      row(
        `relay catch-up of a ${options.backlog.toLocaleString('en-US')}-delivery backlog`,
        perSecond,
        'deliveries/s',
        '>=',
        1_000,
      ),
      row('relay ingress, 20 senders (context)', journaledPerSecond, 'deliveries/s'),
    ];
  } finally {
    child.kill('SIGTERM');
    app.server.close();
  }
}

/** The relay's RSS serving a file journal that holds `count` deliveries (written before it starts). */
async function rssWith(count: number, work: string): Promise<number> {
  const directory = join(work, `rss-${count}`);
  const journal = await FileJournal.open({ directory, retention: { maxEvents: 1_000_000 } });
  await journal.createChannel({ name: 'rss', tokenHash: 'unused', createdAt: Date.now() });
  const entry = (n: number) => {
    const bytes = Buffer.from(body(n));
    return {
      receivedAt: Date.now(),
      mediaType: 'application/x-www-form-urlencoded',
      sender: '127.0.0.1',
      sha256: sha(bytes),
      body: bytes,
    };
  };
  for (let n = 1; n <= count; n += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - n + 1) }, (_, i) => journal.append('rss', entry(n + i))),
    );
  }
  await journal.close();
  const { child, base } = await startRelay(directory);
  try {
    const channel = await createChannel(base, 'probe');
    for (let n = 1; n <= 200; n++) await post(channel.serverUrl, body(n));
    const response = await fetch(`${base}/out/probe/events?after=100`, {
      headers: { authorization: `Bearer ${channel.token}` },
    });
    await response.text();
    await new Promise((resolve) => setTimeout(resolve, 500));
    return rssBytes(child.pid!);
  } finally {
    child.kill('SIGTERM');
  }
}

/** The relay rows, each from the built packages in child processes: the bin, and `payhook relay connect`. */
export async function runRelay(options: RelayBenchOptions, log: (line: string) => void): Promise<RelayRow[]> {
  const work = mkdtempSync(join(tmpdir(), 'payhook-bench-relay-'));
  try {
    const rows = [
      ...(await measureLatency(options, work, log)),
      ...(await measureCatchUp(options, work, log)),
    ];
    const [small, large] = options.rss;
    log(`relay: RSS with ${small} and ${large} deliveries journaled`);
    const rssSmall = await rssWith(small, work);
    const rssLarge = await rssWith(large, work);
    rows.push(
      row(
        `relay RSS, ${large.toLocaleString('en-US')} journaled / ${small.toLocaleString('en-US')}`,
        rssLarge / rssSmall,
        '×',
        '<=',
        1.1,
      ),
      row(`relay RSS with ${small.toLocaleString('en-US')} journaled (context)`, rssSmall / 2 ** 20, 'MiB'),
      row(`relay RSS with ${large.toLocaleString('en-US')} journaled (context)`, rssLarge / 2 ** 20, 'MiB'),
    );
    return rows;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
