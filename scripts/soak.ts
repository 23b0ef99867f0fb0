/**
 * `pnpm soak [--seconds 60] [--concurrency 8] [--seed 1] [--max-heap-growth-mib 24]`: a bounded abuse run.
 *
 * Starts the Express example (`examples/express`, as `npm start` does) on 127.0.0.1 in its own process, with
 * `--expose-gc` and a preloaded IPC probe (so nothing soak-specific is in the example), then sends it, from this
 * process, a seeded mix of valid, duplicate, tampered, oversized, garbage and slow (stalled or trickled) deliveries.
 * It checks that every valid notification was handled exactly once (the example prints one JSON line per handled
 * notification), that every other request got its exact status and error code, that every slow request was cut
 * off with 408 and its redelivery then handled, and that the server's heap after a forced GC grew by less than the
 * bound between warm-up and the end. Prints its figures; exits 1 on any miss.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { encodeBase64Url } from '@payhook/core/adapter';
import { encodeForm, envelope, FORM, signedData, signedForm } from '../test/support/signed-form.ts';
import { ROOT } from './check-packages.ts';

type Kind =
  | 'valid'
  | 'duplicate'
  | 'tampered'
  | 'oversized'
  | 'oversized-chunked'
  | 'garbage-form'
  | 'garbage-json'
  | 'garbage-type'
  | 'garbage-repeated'
  | 'garbage-data'
  | 'garbage-fields'
  | 'slow-stall'
  | 'slow-trickle'
  | 'redelivery-after-slow';

/** What each kind must be answered: the status and the body's outcome (2xx) or error code (refusals). */
const EXPECTED: Record<Kind, [number, string]> = {
  valid: [200, 'handled'],
  duplicate: [200, 'duplicate'],
  tampered: [401, 'signature.invalid'],
  oversized: [413, 'payload.too_large'],
  'oversized-chunked': [413, 'payload.too_large'],
  'garbage-form': [400, 'payload.field_missing'],
  'garbage-json': [400, 'payload.malformed'],
  'garbage-type': [415, 'media_type.unsupported'],
  'garbage-repeated': [400, 'payload.field_repeated'],
  'garbage-data': [400, 'data.json_invalid'],
  'garbage-fields': [400, 'notification.invalid'],
  'slow-stall': [408, 'payload.timeout'],
  'slow-trickle': [408, 'payload.timeout'],
  'redelivery-after-slow': [200, 'handled'],
};

/** The mix, by weight, of the fast lane; slow requests have their own lane. */
const MIX: [Kind, number][] = [
  ['valid', 40],
  ['duplicate', 20],
  ['tampered', 10],
  ['oversized', 4],
  ['oversized-chunked', 1],
  ['garbage-form', 5],
  ['garbage-json', 4],
  ['garbage-type', 4],
  ['garbage-repeated', 4],
  ['garbage-data', 4],
  ['garbage-fields', 4],
];

const MAX_BODY_BYTES = 1024 * 1024; // the example runs with core's default maxBodyBytes
const READ_TIMEOUT_MS = 10_000; // and core's default readTimeoutMs
const SLOW_EVERY_MS = 500;
const MAX_SLOW_IN_FLIGHT = 16;
const MIB = 1024 * 1024;

// Preloaded into the server process: answers a heap probe over IPC after a forced GC.
const PROBE = `process.on('message', (message) => {
  if (message !== 'payhook-soak:heap') return;
  globalThis.gc(); globalThis.gc();
  process.send({ type: 'payhook-soak:heap', usage: process.memoryUsage(), sockets: process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length });
});
process.channel?.unref();`;

interface Probe {
  usage: NodeJS.MemoryUsage;
  sockets: number;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A small seeded PRNG (mulberry32), so a failing mix can be replayed with `--seed`. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Ids unique to this run, so a store that outlives it could never answer duplicate to a fresh notification.
const RUN = randomBytes(4).toString('hex');
const orderId = (n: number): string => `soak-${RUN}-${n}`;

function notification(n: number): Record<string, unknown> {
  return {
    payment_id: `soak-${RUN}-payment-${n}`,
    order_id: orderId(n),
    pos_id: 'soak-pos',
    mode: 'direct',
    method: 'purchase',
    amount: (n % 1000) + 0.5,
    currency: 'XTS',
    status: 'success',
    status_code: '1000',
    cc_token: `soak-card-token-${n}`,
    created_at: '2026-11-22T10:00:00',
  };
}

class Server {
  readonly handled = new Map<string, number>();
  readonly stderr: string[] = [];
  readonly exited: Promise<number | null>;
  readonly ready: Promise<string>;
  stdoutClosed: Promise<void> = Promise.resolve();
  #heapWaiters: ((probe: Probe) => void)[] = [];

  constructor(readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    this.ready = new Promise((resolve, reject) => {
      child.on('exit', (code) => reject(new Error(`the server exited (${code}) before listening`)));
      const lines = createInterface({ input: child.stdout! });
      this.stdoutClosed = new Promise((done) => lines.once('close', () => done()));
      lines.on('line', (line) => {
        const listening = /^listening on (http:\/\/\S+)$/.exec(line);
        if (listening) return resolve(listening[1]!);
        try {
          const order = (JSON.parse(line) as { order_id?: string }).order_id;
          if (order !== undefined) this.handled.set(order, (this.handled.get(order) ?? 0) + 1);
        } catch {
          this.stderr.push(`stdout: ${line}`);
        }
      });
    });
    createInterface({ input: child.stderr! }).on('line', (line) => this.stderr.push(line));
    child.on('message', (message: { type?: string } & Probe) => {
      if (message?.type === 'payhook-soak:heap') this.#heapWaiters.shift()?.(message);
    });
  }

  /** The server's memory after a forced GC, and how many TCP sockets it holds open. */
  probe(): Promise<Probe> {
    return new Promise((resolve) => {
      this.#heapWaiters.push(resolve);
      this.child.send('payhook-soak:heap');
    });
  }

  async heap(): Promise<NodeJS.MemoryUsage> {
    return (await this.probe()).usage;
  }
}

function withoutStores(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { REDIS_URL: _redis, DATABASE_URL: _database, ...rest } = env;
  return rest;
}

function startServer(secret: string): Server {
  const cwd = join(ROOT, 'examples', 'express');
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      `data:text/javascript,${encodeURIComponent(PROBE)}`,
      '--import',
      'tsx',
      'src/server.ts',
    ],
    {
      cwd,
      // The example picks Redis or PostgreSQL when these are set; the soak runs it on its memory store.
      env: { ...withoutStores(process.env), PORT: '0', HOST: '127.0.0.1', WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  return new Server(child);
}

/** One request; `body` is written at once, or by `write` for slow and chunked senders. */
function send(
  origin: string,
  options: {
    agent: Agent | false;
    headers: Record<string, string | number>;
    body?: string;
    write?: (req: ReturnType<typeof request>, done: () => boolean) => void;
    limitMs: number;
  },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL('/webhooks', origin);
    let answered = false;
    const req = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      agent: options.agent,
      headers: options.headers,
    });
    const limit = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${options.limitMs} ms`));
    }, options.limitMs);
    req.on('response', (incoming) => {
      answered = true;
      let body = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => {
        body += chunk;
      });
      incoming.on('end', () => {
        clearTimeout(limit);
        if (options.agent === false) req.destroy();
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body });
      });
    });
    // A server that answers early (413) and closes may make the rest of the upload fail; the answer is what counts.
    req.on('error', (error) => {
      if (!answered) {
        clearTimeout(limit);
        reject(error);
      }
    });
    if (options.write) options.write(req, () => answered);
    else req.end(options.body);
  });
}

function verdict(kind: Kind, answer: Answer): string | undefined {
  const [status, expected] = EXPECTED[kind];
  let actual: string | undefined;
  try {
    const json = JSON.parse(answer.body) as { outcome?: string; error?: { code?: string } };
    actual = status === 200 ? json.outcome : json.error?.code;
  } catch {
    actual = undefined;
  }
  if (answer.status !== status || actual !== expected) {
    return `${kind}: expected ${status} ${expected}, got ${answer.status} ${answer.body.slice(0, 200)}`;
  }
  if ((status === 408 || status === 413) && answer.headers.connection !== 'close') {
    return `${kind}: ${status} without Connection: close`;
  }
  return undefined;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '60' },
      concurrency: { type: 'string', default: '8' },
      seed: { type: 'string', default: '1' },
      'max-heap-growth-mib': { type: 'string', default: '24' },
    },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const seed = Number(values.seed);
  const maxGrowth = Number(values['max-heap-growth-mib']) * MIB;
  if (!(seconds > 0) || !(concurrency > 0) || !Number.isFinite(seed) || !(maxGrowth > 0)) {
    console.error('soak: --seconds, --concurrency and --max-heap-growth-mib must be positive numbers');
    return 2;
  }
  const rand = random(seed);
  const secret = randomBytes(24).toString('base64url');
  const server = startServer(secret);
  const misses: string[] = [];
  const counts = new Map<Kind, number>();
  const latencies: number[] = [];
  const sentValid = new Set<string>();
  const recentValid: number[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  let slowInFlight = 0;
  let resets = 0;
  const slowRuns: Promise<void>[] = [];

  const record = (kind: Kind, answer: Answer, started: number) => {
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    if (kind !== 'slow-stall' && kind !== 'slow-trickle') latencies.push(performance.now() - started);
    const miss = verdict(kind, answer);
    if (miss && misses.length < 50) misses.push(miss);
    else if (miss) misses.push('…');
  };

  async function fast(origin: string): Promise<void> {
    const roll = rand() * MIX.reduce((sum, [, weight]) => sum + weight, 0);
    let kind: Kind = 'valid';
    for (let acc = 0, i = 0; i < MIX.length; i++) {
      acc += MIX[i]![1];
      if (roll < acc) {
        kind = MIX[i]![0];
        break;
      }
    }
    if (kind === 'duplicate' && recentValid.length === 0) kind = 'valid';
    const headers: Record<string, string | number> = { 'content-type': FORM };
    let body = '';
    let agentFor: Agent | false = agent;
    let write: ((req: ReturnType<typeof request>, done: () => boolean) => void) | undefined;
    const n = next++;
    switch (kind) {
      case 'valid':
        body = signedForm(notification(n), secret);
        break;
      case 'duplicate': {
        body = signedForm(notification(recentValid[Math.floor(rand() * recentValid.length)]!), secret);
        break;
      }
      case 'tampered': {
        const { signature } = envelope(notification(n), secret);
        body = encodeForm({ data: envelope({ ...notification(n), amount: 0.01 }, secret).data, signature });
        break;
      }
      case 'oversized':
        agentFor = false;
        headers['content-length'] = MAX_BODY_BYTES + 1 + Math.floor(rand() * MIB);
        // Headers only: the declared length is refused before any body byte is read.
        write = (req) => req.flushHeaders();
        break;
      case 'oversized-chunked':
        agentFor = false;
        write = (req, done) => {
          const chunk = 'x'.repeat(64 * 1024);
          let sent = 0;
          const pump = () => {
            while (!done() && sent <= MAX_BODY_BYTES + chunk.length) {
              sent += chunk.length;
              if (!req.write(chunk)) return void req.once('drain', pump);
            }
            if (!done()) req.end();
          };
          pump();
        };
        break;
      case 'garbage-form':
        body = randomBytes(64 + Math.floor(rand() * 512))
          .toString('base64')
          .replace(/=/g, '');
        break;
      case 'garbage-json':
        headers['content-type'] = 'application/json';
        body = `{"data": "${randomBytes(16).toString('hex')}", "signature": `;
        break;
      case 'garbage-type':
        headers['content-type'] = 'text/plain';
        body = signedForm(notification(n), secret);
        break;
      case 'garbage-repeated':
        body = `${signedForm(notification(n), secret)}&data=again`;
        break;
      case 'garbage-data':
        body = signedData(encodeBase64Url(`not json ${randomBytes(8).toString('hex')}`), secret);
        break;
      case 'garbage-fields':
        body = signedForm({ order_id: orderId(n), status: 'success' }, secret);
        break;
      default:
        throw new Error(`unexpected kind ${kind}`);
    }
    if (write === undefined) headers['content-length'] = Buffer.byteLength(body);
    const started = performance.now();
    let answer: Answer;
    try {
      answer = await send(origin, { agent: agentFor, headers, body, write, limitMs: 30_000 });
    } catch (error) {
      // Past the limit the server answers 413 and closes with upload bytes still unread, so the kernel may reset
      // the connection before the client reads the answer: still a refusal, counted apart.
      const code = (error as NodeJS.ErrnoException).code;
      if (kind === 'oversized-chunked' && (code === 'ECONNRESET' || code === 'EPIPE')) {
        resets++;
        return;
      }
      throw error;
    }
    record(kind, answer, started);
    if (kind === 'valid' && answer.status === 200) {
      sentValid.add(orderId(n));
      recentValid.push(n);
      if (recentValid.length > 1000) recentValid.shift();
    }
  }

  async function slow(origin: string, kind: 'slow-stall' | 'slow-trickle'): Promise<void> {
    const n = next++;
    const body = signedForm(notification(n), secret);
    let trickle: NodeJS.Timeout | undefined;
    const started = performance.now();
    const answer = await send(origin, {
      agent: false,
      headers: { 'content-type': FORM, 'content-length': Buffer.byteLength(body) },
      limitMs: READ_TIMEOUT_MS + 20_000,
      write: (req, done) => {
        if (kind === 'slow-stall') return void req.write(body.slice(0, Math.floor(body.length / 2)));
        let sent = 0;
        trickle = setInterval(() => {
          if (done() || sent >= body.length - 1) return clearInterval(trickle);
          req.write(body.slice(sent, sent + 1));
          sent++;
        }, 250);
      },
    }).finally(() => clearInterval(trickle));
    record(kind, answer, started);
    // The cut-off delivery held no lease: sent again in full, it is handled.
    const again = await send(origin, {
      agent,
      headers: { 'content-type': FORM, 'content-length': Buffer.byteLength(body) },
      body,
      limitMs: 30_000,
    });
    record('redelivery-after-slow', again, performance.now());
    if (again.status === 200) sentValid.add(orderId(n));
  }

  let exitCode = 0;
  try {
    const origin = await server.ready;
    console.log(
      `soak: server ${origin} (examples/express, pid ${server.child.pid}); ${seconds} s, concurrency ${concurrency}, seed ${seed}`,
    );
    const started = Date.now();
    const warmUntil = started + Math.min(3_000, (seconds * 1000) / 5);
    const endAt = started + seconds * 1000;
    let baseline: NodeJS.MemoryUsage | undefined;
    let baselineAsked = false;
    let peakHeap = 0;
    const sampler = setInterval(() => {
      void server.heap().then((usage) => {
        peakHeap = Math.max(peakHeap, usage.heapUsed);
      });
    }, 5_000);
    let slowKind = 0;
    const slowLane = setInterval(() => {
      if (Date.now() >= endAt || slowInFlight >= MAX_SLOW_IN_FLIGHT) return;
      slowInFlight++;
      const run = slow(origin, slowKind++ % 2 === 0 ? 'slow-stall' : 'slow-trickle')
        .catch((error: Error) => {
          misses.push(`slow: ${error.message}`);
        })
        .finally(() => slowInFlight--);
      slowRuns.push(run);
    }, SLOW_EVERY_MS);
    const workers = Array.from({ length: concurrency }, async () => {
      while (Date.now() < endAt) {
        if (!baselineAsked && Date.now() >= warmUntil) {
          baselineAsked = true;
          baseline = await server.heap();
        }
        await fast(origin).catch((error: Error) => {
          misses.push(`request: ${error.message}`);
        });
      }
    });
    await Promise.all(workers);
    clearInterval(slowLane);
    await Promise.all(slowRuns);
    clearInterval(sampler);
    const elapsed = (Date.now() - started) / 1000;
    agent.destroy();
    // Every connection was closed by now on the client side: the server must hold none (no leaked slow sockets).
    let open = (await server.probe()).sockets;
    for (let i = 0; i < 30 && open > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      open = (await server.probe()).sockets;
    }
    if (open > 0) misses.push(`the server still holds ${open} TCP sockets after every client closed`);
    const final = await server.heap();
    peakHeap = Math.max(peakHeap, final.heapUsed);

    const growth = baseline ? final.heapUsed - baseline.heapUsed : Number.NaN;
    if (!(growth <= maxGrowth)) {
      misses.push(
        `heap grew ${(growth / MIB).toFixed(1)} MiB after GC (bound ${(maxGrowth / MIB).toFixed(0)} MiB)`,
      );
    }

    const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
    latencies.sort((a, b) => a - b);
    console.log(`soak: ${total} requests in ${elapsed.toFixed(1)} s (${(total / elapsed).toFixed(0)}/s)`);
    for (const [kind, count] of [...counts].sort()) {
      console.log(`  ${kind.padEnd(22)} ${String(count).padStart(7)}  → ${EXPECTED[kind].join(' ')}`);
    }
    if (resets > 0) console.log(`  oversized-chunked reset before the 413 was read: ${resets}`);
    console.log(`  server sockets open after the run: ${open}`);
    console.log(
      `  latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms (slow requests excluded)`,
    );
    console.log(
      `  heap after GC: warm ${((baseline?.heapUsed ?? 0) / MIB).toFixed(1)} MiB → end ${(final.heapUsed / MIB).toFixed(1)} MiB (growth ${(growth / MIB).toFixed(1)} MiB, bound ${(maxGrowth / MIB).toFixed(0)} MiB); peak ${(peakHeap / MIB).toFixed(1)} MiB; rss ${(final.rss / MIB).toFixed(1)} MiB`,
    );
    const errors = server.stderr.filter((line) => !line.startsWith('[payhook example]'));
    if (errors.length > 0) console.log(`  server stderr (${errors.length} lines), first: ${errors[0]}`);
  } catch (error) {
    misses.push(`soak: ${(error as Error).message}`);
  } finally {
    server.child.kill('SIGTERM');
    const code = await Promise.race([
      server.exited,
      new Promise<'timeout'>((r) => setTimeout(r, 5_000, 'timeout')),
    ]);
    if (code === 'timeout') {
      server.child.kill('SIGKILL');
      misses.push('the server did not exit within 5 s of SIGTERM');
    } else if (code !== 0) misses.push(`the server exited with ${code} after SIGTERM`);
  }
  // Only now, with the server gone and its stdout read to the end, is every handled line counted.
  await Promise.race([server.stdoutClosed, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  // Every valid notification was handled exactly once; nothing else reached the handler.
  let missing = 0;
  let twice = 0;
  for (const order of sentValid) {
    const times = server.handled.get(order) ?? 0;
    if (times === 0) missing++;
    if (times > 1) twice++;
  }
  const unexpected = [...server.handled.keys()].filter((order) => !sentValid.has(order)).length;
  if (missing > 0) misses.push(`${missing} valid notifications were never handled`);
  if (twice > 0) misses.push(`${twice} notifications were handled more than once`);
  if (unexpected > 0) misses.push(`${unexpected} refused or unsent notifications reached the handler`);
  console.log(`  handled exactly once: ${sentValid.size - missing - twice}/${sentValid.size}`);
  if (misses.length > 0) {
    console.error(`soak: FAILED, ${misses.length} misses:\n${misses.map((m) => `  - ${m}`).join('\n')}`);
    if (server.stderr.length > 0) console.error(`server stderr:\n${server.stderr.slice(-20).join('\n')}`);
    exitCode = 1;
  } else {
    console.log('soak: passed');
  }
  return exitCode;
}

process.exitCode = await main();
