import { type ChildProcess, spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { percentiles } from './limits.js';
import { createDeliverySource, formBody, SECRET } from './payload.js';

const EXAMPLE = new URL('../examples/queue/', import.meta.url);
const BENCH = new URL('./', import.meta.url);

/** A running `examples/queue` web process on one engine, and how to stop it. */
export interface ExampleServer {
  url: string;
  stop(): Promise<void>;
}

/** What the example's processes and the minimum share: the engine, the servers, a queue and key prefix of their own. */
interface ExampleEnv {
  REDIS_URL: string;
  DATABASE_URL: string;
  name: string;
}

/** Starts `node --import tsx <script>` in `cwd`; resolves once a line of its output matches `ready`. */
async function startProcess(
  script: string,
  cwd: URL,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ match: RegExpExecArray; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited ${code} before it was ready`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const found = ready.exec(line);
      if (found) resolve(found);
    });
  });
  return {
    match,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function exampleEnv(engine: 'bullmq' | 'postgres', env: ExampleEnv): NodeJS.ProcessEnv {
  return {
    WEBHOOK_SECRET: SECRET,
    PORT: '0',
    QUEUE: engine,
    REDIS_URL: env.REDIS_URL,
    DATABASE_URL: env.DATABASE_URL,
    PAYHOOK_QUEUE: env.name,
    PAYHOOK_PREFIX: `${env.name}:`,
    PAYHOOK_TABLE: 'payhook_bench_burst_inbox',
  };
}

/** Starts `examples/queue`'s web process (`npm start`) on a free port with `QUEUE=engine`, queue and table its own. */
export async function startExample(engine: 'bullmq' | 'postgres', env: ExampleEnv): Promise<ExampleServer> {
  const web = await startProcess(
    'src/server.ts',
    EXAMPLE,
    exampleEnv(engine, env),
    /listening on (http:\/\/\S+)/,
  );
  return { url: web.match[1]!, stop: web.stop };
}

/** Starts `count` of `examples/queue`'s workers (`npm run worker`) on the example's queue; resolves once all are ready. */
export async function startWorkers(
  engine: 'bullmq' | 'postgres',
  env: ExampleEnv,
  count: number,
): Promise<{ stop(): Promise<void> }> {
  const workers = await Promise.all(
    Array.from({ length: count }, () =>
      startProcess('src/worker.ts', EXAMPLE, exampleEnv(engine, env), /^worker ready$/),
    ),
  );
  return { stop: async () => void (await Promise.all(workers.map((worker) => worker.stop()))) };
}

/** Starts the hand-written minimum (`queue-minimum.ts`: Express, verify by hand, enqueue once per key) on `engine`. */
export async function startMinimum(engine: 'bullmq' | 'postgres', env: ExampleEnv): Promise<ExampleServer> {
  const minimum = await startProcess(
    'queue-minimum.ts',
    BENCH,
    { ...exampleEnv(engine, env), PAYHOOK_QUEUE: `${env.name}-minimum` },
    /listening on (http:\/\/\S+)/,
  );
  return { url: minimum.match[1]!, stop: minimum.stop };
}

/** POSTs one form body to `url/webhooks`; resolves its latency in ms, and rejects on anything but a 200. */
function post(url: string, body: string, agent: Agent): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/webhooks`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) resolve(performance.now() - started);
          else reject(new Error(`examples/queue answered ${res.statusCode}`));
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * `warmup` distinct webhooks one after another, then `burst` distinct webhooks sent at once, each on its own
 * connection (as the service's senders would): the burst's answer latencies, p50 and p99 in ms.
 */
export async function burst(
  url: string,
  warmup: number,
  size: number,
): Promise<{ p50: number; p99: number }> {
  const next = createDeliverySource();
  const bodyOf = () => {
    const { data, signature } = next();
    return formBody(data, signature);
  };
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  try {
    for (let i = 0; i < warmup; i++) await post(url, bodyOf(), agent);
    const bodies = Array.from({ length: size }, bodyOf);
    return percentiles(await Promise.all(bodies.map((body) => post(url, body, agent))));
  } finally {
    agent.destroy();
  }
}

/** A warm burst's answers: p50 and p99 in ms. */
export interface BurstLatency {
  p50: number;
  p99: number;
}

/**
 * Warm bursts, alternating between servers: first one unmeasured burst to each (it opens the connections, kept
 * alive for the next), then `pairs` times one burst to each in turn (the order rotated each time). A burst is
 * `notifications` distinct webhooks, each sent `copies` times, all at once over those connections. Each server's
 * p50 and p99 per burst, in order.
 */
export async function warmBursts(
  urls: readonly string[],
  options: { pairs: number; notifications: number; copies: number },
): Promise<BurstLatency[][]> {
  const next = createDeliverySource();
  const size = options.notifications * options.copies;
  const agents = urls.map(() => new Agent({ keepAlive: true, maxSockets: size }));
  const once = (server: number) => {
    const bodies = Array.from({ length: options.notifications }, () => {
      const { data, signature } = next();
      return formBody(data, signature);
    });
    // Copies of one notification arrive together, as the service's quick redeliveries would.
    const sent = Array.from({ length: size }, (_, i) => bodies[i % options.notifications]!);
    return Promise.all(sent.map((body) => post(urls[server]!, body, agents[server]!))).then(percentiles);
  };
  try {
    for (let server = 0; server < urls.length; server++) await once(server);
    const figures: BurstLatency[][] = urls.map(() => []);
    for (let pair = 0; pair < options.pairs; pair++) {
      for (let i = 0; i < urls.length; i++) {
        const server = (i + pair) % urls.length;
        figures[server]!.push(await once(server));
      }
    }
    return figures;
  } finally {
    for (const agent of agents) agent.destroy();
  }
}
