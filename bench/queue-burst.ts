import { type ChildProcess, spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { percentiles } from './limits.js';
import { createDeliverySource, formBody, SECRET } from './payload.js';

const EXAMPLE = new URL('../examples/queue/', import.meta.url);

/** A running `examples/queue` web process on one engine, and how to stop it. */
export interface ExampleServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts `examples/queue`'s web process (`npm start`) on a free port with `QUEUE=engine`, queue and table its own. */
export async function startExample(
  engine: 'bullmq' | 'postgres',
  env: { REDIS_URL: string; DATABASE_URL: string; name: string },
): Promise<ExampleServer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: EXAMPLE,
    env: {
      ...process.env,
      WEBHOOK_SECRET: SECRET,
      PORT: '0',
      QUEUE: engine,
      REDIS_URL: env.REDIS_URL,
      DATABASE_URL: env.DATABASE_URL,
      PAYHOOK_QUEUE: env.name,
      PAYHOOK_PREFIX: `${env.name}:`,
      PAYHOOK_TABLE: 'payhook_bench_burst_inbox',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`examples/queue exited ${code} before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
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
