import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clusterOk, freePort, pingRedis } from './servers.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Node {
  readonly port: number;
  /** The cluster bus port, given explicitly: port + 10000 may be past 65535 for a port the kernel chose. */
  readonly busPort: number;
  process: ChildProcess | undefined;
}

/**
 * A private Redis Cluster on free loopback ports (three masters, a replica each), which a test may break: kill a
 * master, freeze a replica, start a node again (it rejoins through its nodes.conf, and its data from its append-only
 * file). Never touches the shared cluster of REDIS_CLUSTER_URLS. A node timeout of 1 s, so a killed master's replica
 * takes over within seconds; a replica takes over however long it was cut off from its master
 * (`cluster-replica-validity-factor 0`), so one started again after a crash can be promoted with what its file held.
 */
export class PrivateRedisCluster {
  readonly #dir: string;
  readonly #nodes: Node[];

  private constructor(nodes: Node[]) {
    this.#dir = mkdtempSync(join(tmpdir(), 'payhook-cluster-'));
    this.#nodes = nodes;
  }

  /** Starts six nodes and joins them (`redis-cli --cluster create … --cluster-replicas 1`); resolves once healthy. */
  static async start(): Promise<PrivateRedisCluster> {
    const nodes: Node[] = [];
    for (let i = 0; i < 6; i++) {
      nodes.push({ port: await freePort(), busPort: await freePort(), process: undefined });
    }
    const cluster = new PrivateRedisCluster(nodes);
    try {
      for (const node of nodes) await cluster.#spawn(node);
      const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
      await run('redis-cli', [
        '--cluster',
        'create',
        ...addresses,
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ]);
      await cluster.healthy();
    } catch (error) {
      await cluster.dispose();
      throw error;
    }
    return cluster;
  }

  /** Every node, as ioredis's `Cluster` takes its startup nodes. */
  startupNodes(): { host: string; port: number }[] {
    return this.#nodes.map((node) => ({ host: '127.0.0.1', port: node.port }));
  }

  /** The port of the master that serves `slot` now, and the ports of its replicas, from a live node's CLUSTER SHARDS. */
  async shardOf(slot: number): Promise<{ master: number; replicas: number[] }> {
    for (const node of this.#nodes) {
      if (node.process === undefined) continue;
      const answer = await this.cli(node.port, 'cluster', 'nodes').catch(() => undefined);
      if (answer === undefined) continue;
      const lines = answer
        .trim()
        .split('\n')
        .map((line) => line.split(' '));
      const master = lines.find(
        (f) =>
          f[2]!.includes('master') &&
          !f[2]!.includes('fail') &&
          f.slice(8).some((range) => {
            const [from, to = from] = range.split('-').map(Number);
            return slot >= from! && slot <= to!;
          }),
      );
      if (master === undefined) continue;
      const replicas = lines
        .filter((f) => f[3] === master[0] && !f[2]!.includes('fail'))
        .map((f) => Number(f[1]!.split(/[:@]/)[1]));
      return { master: Number(master[1]!.split(/[:@]/)[1]), replicas };
    }
    throw new Error(`no live node knows who serves slot ${slot}`);
  }

  /**
   * SIGSTOP of the node on `port`: it reads nothing more, so what its master sends it waits in the kernel, and is
   * lost with the node if it is then killed.
   */
  freeze(port: number): void {
    this.#node(port).process?.kill('SIGSTOP');
  }

  /** SIGKILL of the node on `port`: no goodbye to its peers, as a crashed machine. */
  async kill(port: number): Promise<void> {
    const node = this.#node(port);
    const child = node.process;
    node.process = undefined;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }

  /** Starts the node on `port` again; it rejoins (as a replica, once its master was replaced) through nodes.conf. */
  async restart(port: number): Promise<void> {
    await this.#spawn(this.#node(port));
  }

  /**
   * Resolves once every node says cluster_state:ok and every master has a replica whose link to it is up (a replica
   * that never synced refuses to take over: its data is too old); fails after `timeoutMs`.
   */
  async healthy(timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      try {
        let linked = 0;
        for (const node of this.#nodes) {
          await clusterOk(`redis://127.0.0.1:${node.port}`, 1_000);
          const replication = await this.cli(node.port, 'info', 'replication');
          if (replication.includes('master_link_status:up')) linked++;
        }
        if (linked === 3) return;
      } catch {
        // Not yet: a node still starting, a failover or a resync under way.
      }
      if (Date.now() > until)
        throw new Error(`the private Redis Cluster did not become healthy in ${timeoutMs} ms`);
      await sleep(200);
    }
  }

  /** Runs redis-cli against the node on `port`; resolves its output. */
  async cli(port: number, ...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-p', String(port), ...args], { timeout: 10_000 });
    return stdout;
  }

  async dispose(): Promise<void> {
    for (const node of this.#nodes) await this.kill(node.port);
    rmSync(this.#dir, { recursive: true, force: true });
  }

  #node(port: number): Node {
    const node = this.#nodes.find((n) => n.port === port);
    if (node === undefined) throw new Error(`no node of this cluster listens on ${port}`);
    return node;
  }

  async #spawn(node: Node): Promise<void> {
    const dir = join(this.#dir, String(node.port));
    mkdirSync(dir, { recursive: true });
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(node.port),
        '--cluster-port',
        String(node.busPort),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        '1000',
        '--cluster-replica-validity-factor',
        '0',
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--dir',
        dir,
      ],
      { stdio: 'ignore' },
    );
    node.process = child;
    for (let i = 0; i < 100; i++) {
      try {
        await pingRedis(`redis://127.0.0.1:${node.port}`, 500);
        return;
      } catch {
        if (child.exitCode !== null) break;
        await sleep(50);
      }
    }
    throw new Error(`the cluster node on port ${node.port} did not start`);
  }
}
