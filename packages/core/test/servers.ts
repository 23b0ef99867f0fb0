import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The Redis the tests share: `REDIS_URL`, or the local default. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The PostgreSQL database the tests share: `DATABASE_URL`, or the local default. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The Redis Cluster the tests share (three masters, three replicas): `REDIS_CLUSTER_URLS`, comma-separated, or the
 * six local nodes scripts/ensure-services.sh starts (ports 30001 to 30006).
 */
export const REDIS_CLUSTER_URLS = (
  process.env.REDIS_CLUSTER_URLS ?? [1, 2, 3, 4, 5, 6].map((n) => `redis://127.0.0.1:3000${n}`).join(',')
).split(',');
/** PgBouncer in transaction mode in front of `DATABASE_URL`'s server: `PGBOUNCER_URL`, or the local default. */
export const PGBOUNCER_URL = process.env.PGBOUNCER_URL ?? 'postgres://postgres@127.0.0.1:6432/test';

const CI = process.env.CI === 'true';

/** Resolves true when a server answers; `probe` must settle by itself within a couple of seconds. */
async function reach(name: string, url: string, probe: () => Promise<void>, start?: () => void) {
  try {
    await probe();
    return true;
  } catch (first) {
    if (start) {
      try {
        start();
        for (let i = 0; i < 20; i++) {
          try {
            await probe();
            return true;
          } catch {
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        }
      } catch {
        // Not installed or not allowed: fall through to the notice.
      }
    }
    const message = `${name} is unreachable at ${redact(url)} (${(first as Error).message})`;
    if (CI) throw new Error(`${message}: CI=true requires it; run scripts/ensure-services.sh.`);
    console.warn(`\n!!! SKIPPING ${name} TESTS: ${message}. Start it or set the URL to run them.\n`);
    return false;
  }
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/** Sends one inline command over a raw socket; resolves the first chunk of its answer. */
function askRedis(url: string, command: string, timeoutMs: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: hostname || '127.0.0.1', port: Number(port || 6379) });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer'));
    }, timeoutMs);
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.once('data', (chunk) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(chunk.toString());
    });
  });
}

/** Sends PING over a raw socket and waits for +PONG. */
export async function pingRedis(url: string, timeoutMs = 2_000): Promise<void> {
  const answer = await askRedis(url, 'PING', timeoutMs);
  if (!answer.startsWith('+PONG')) throw new Error(answer.trim());
}

/** Resolves once the node at `url` says `cluster_state:ok`; rejects with what it said otherwise. */
export async function clusterOk(url: string, timeoutMs = 2_000): Promise<void> {
  const answer = await askRedis(url, 'CLUSTER INFO', timeoutMs);
  if (!answer.includes('cluster_state:ok')) {
    throw new Error(/cluster_state:\w+|^-.*$/m.exec(answer)?.[0] ?? answer.trim());
  }
}

/**
 * True when Redis answers (starting a local `redis-server` when the URL is the local default and one is
 * installed). Outside CI a missing server is a loud skip; under `CI=true` it throws.
 */
export function reachRedis(): Promise<boolean> {
  const local = process.env.REDIS_URL === undefined;
  return reach(
    'Redis',
    REDIS_URL,
    () => pingRedis(REDIS_URL),
    local
      ? () =>
          execFileSync('redis-server', [
            '--daemonize',
            'yes',
            '--bind',
            '127.0.0.1',
            '--port',
            '6379',
            '--save',
            '',
            '--appendonly',
            'no',
          ])
      : undefined,
  );
}

/** True when PostgreSQL answers a query; same skip/fail rule as `reachRedis`. */
export function reachPostgres(): Promise<boolean> {
  const local = process.env.DATABASE_URL === undefined;
  return reach(
    'PostgreSQL',
    DATABASE_URL,
    async () => {
      const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 2_000 });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('select 1');
      } finally {
        await client.end().catch(() => {});
      }
    },
    // The Debian cluster, as scripts/ensure-services.sh starts it.
    local
      ? () => {
          const version = readdirSync('/etc/postgresql')[0];
          if (version === undefined) throw new Error('no PostgreSQL cluster is installed');
          execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'start']);
        }
      : undefined,
  );
}

/**
 * True when every node of the shared Redis Cluster answers and says `cluster_state:ok`. Nothing starts it here:
 * scripts/ensure-services.sh does (`pnpm test:setup`). Same skip/fail rule as `reachRedis`.
 */
export function reachRedisCluster(): Promise<boolean> {
  return reach('Redis Cluster', REDIS_CLUSTER_URLS.join(','), async () => {
    for (const url of REDIS_CLUSTER_URLS) await clusterOk(url);
  });
}

/** The shared cluster's nodes as ioredis's `Cluster` takes them. */
export function clusterNodes(): { host: string; port: number }[] {
  return REDIS_CLUSTER_URLS.map((url) => {
    const { hostname, port } = new URL(url);
    return { host: hostname, port: Number(port || 6379) };
  });
}

/**
 * True when PgBouncer answers a query for `PGBOUNCER_URL`'s database, and its admin console says it is PgBouncer
 * (a plain PostgreSQL on that port would pass every test without proving anything about a pooler). Started by
 * scripts/ensure-services.sh; same skip/fail rule as `reachRedis`.
 */
export function reachPgBouncer(): Promise<boolean> {
  return reach('PgBouncer', PGBOUNCER_URL, async () => {
    await queryOnce(PGBOUNCER_URL, 'select 1');
    const admin = new URL(PGBOUNCER_URL);
    admin.pathname = '/pgbouncer';
    const pools = await queryOnce(admin.toString(), 'SHOW CONFIG');
    const mode = (pools.rows as { key: string; value: string }[]).find((r) => r.key === 'pool_mode');
    if (mode?.value !== 'transaction') {
      throw new Error(`its pool_mode is ${mode?.value ?? 'unknown'}, not transaction`);
    }
  });
}

async function queryOnce(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.query(text);
  } finally {
    await client.end().catch(() => {});
  }
}

/** A free TCP port on 127.0.0.1, from the kernel. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * A private `redis-server` on a free port with an append-only file, which a test may stop and start again (the
 * data survives, as on a production Redis with persistence). Never touches the shared server.
 */
export class PrivateRedis {
  readonly port: number;
  readonly url: string;
  readonly #dir: string;
  #process: ChildProcess | undefined;

  private constructor(port: number) {
    this.port = port;
    this.url = `redis://127.0.0.1:${port}`;
    this.#dir = mkdtempSync(join(tmpdir(), 'payhook-redis-'));
  }

  /** Starts a new private server; resolves once it answers PING. */
  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--dir',
        this.#dir,
      ],
      { stdio: 'ignore' },
    );
    this.#process = child;
    for (let i = 0; i < 100; i++) {
      try {
        await pingRedis(this.url, 500);
        return;
      } catch {
        if (child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    throw new Error(`the private redis-server on port ${this.port} did not start`);
  }

  /** Stops the server (SIGTERM: Redis flushes its append-only file) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

/**
 * A TCP proxy in front of a server, which a test can cut (every open connection destroyed, new ones refused at
 * once) and restore: a deterministic outage without stopping the shared server. It can also stall: stop forwarding
 * bytes either way without closing anything, as a frozen server or network does, until `resume`.
 */
export class CuttableProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #pairs = new Set<[Socket, Socket]>();
  #cut = false;
  #stalled = false;
  port = 0;

  private constructor(target: { host: string; port: number }) {
    this.#server = createServer((client) => {
      if (this.#cut) {
        client.destroy();
        return;
      }
      const upstream = createConnection(target);
      const pair: [Socket, Socket] = [client, upstream];
      this.#pairs.add(pair);
      for (const socket of pair) {
        this.#sockets.add(socket);
        socket.once('close', () => {
          this.#sockets.delete(socket);
          this.#pairs.delete(pair);
        });
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      if (!this.#stalled) forward(pair);
    });
  }

  /** Listens on an ephemeral port in front of `target`. */
  static async start(target: { host: string; port: number }): Promise<CuttableProxy> {
    const proxy = new CuttableProxy(target);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    proxy.port = (proxy.#server.address() as { port: number }).port;
    return proxy;
  }

  cut(): void {
    this.#cut = true;
    for (const socket of this.#sockets) socket.destroy();
  }

  restore(): void {
    this.#cut = false;
  }

  /** Stops forwarding: what either side sends waits in the proxy, and nothing is closed. */
  stall(): void {
    this.#stalled = true;
    for (const [client, upstream] of this.#pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Forwards again, what waited first. */
  resume(): void {
    this.#stalled = false;
    for (const pair of this.#pairs) forward(pair);
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

function forward([client, upstream]: [Socket, Socket]): void {
  client.pipe(upstream);
  upstream.pipe(client);
}
