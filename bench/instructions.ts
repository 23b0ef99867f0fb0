// `pnpm bench:instructions [--against <core build>] [--otel batch|simple|noop [--store-spans]] [--n 2000] [--no-cpu]`: what the full core handler
// (MemoryStore) costs a delivery, counted in instructions (`valgrind --tool=callgrind`), not time: on a machine other
// processes load, time swings by more than the 2% this compares, instruction counts repeat. Each variant runs
// 2,000 deliveries of warm-up then n, and again then 2n, each in a fresh single-threaded process; the difference
// over n is one delivery, without the process's start. Variants: this build with no subscriber; `--against`:
// another build of core (its `dist/index.js`), e.g. one without the diagnostics calls (bench/README.md says how it
// is made); `--otel`: this build with the OpenTelemetry SDK subscribed (bench/otel.ts), or (`noop`) with subscribers
// that do nothing.
// `--otel batch|simple` also counts the same spans and metrics written by hand (`--hand`, bench/otel.ts) and prints
// payhook's ratio against them (issue 34's target).
// `--child [--core <path>] [--otel batch|simple] [--hand] [--n]` is one such process (also for `node --cpu-prof`): the
// deliveries, then the CPU time one took.
import { execFileSync, spawnSync } from 'node:child_process';
import { tracingChannel } from 'node:diagnostics_channel';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as Core from '@payhook/core';
import { PAYHOOK_CHANNELS } from '@payhook/core/diagnostics';
import { createIdSource, encodeData, formBody, SECRET, signData } from './payload.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
};
const n = Number(option('--n') ?? 2_000);
const WARMUP = 2_000;

/** Warm-up deliveries, then `count` more on fresh notifications; the CPU time of those, in µs a delivery. */
async function deliver(core: typeof Core, count: number, otel: string | undefined): Promise<number> {
  const nextId = createIdSource();
  const bodies = Array.from({ length: WARMUP + count }, () => {
    const data = encodeData(nextId());
    return Buffer.from(formBody(data, signData(data)));
  });
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  const { handler, subscriber } = await instrumented(core, otel);
  subscriber?.enable();
  let started = 0;
  for (let i = 0; i < bodies.length; i++) {
    if (i === WARMUP) started = process.cpuUsage().user + process.cpuUsage().system;
    const result = await handler({ method: 'POST', headers, body: bodies[i]! });
    if (result.outcome !== 'handled') throw new Error(`a delivery answered ${result.outcome}`);
  }
  const usage = process.cpuUsage();
  await subscriber?.disable();
  return (usage.user + usage.system - started) / count;
}

/**
 * The handler a variant delivers to: core's with nobody subscribed, with `PayhookInstrumentation` or no-op
 * subscribers (`subscriber`), or (`--hand`) core's wrapped in the same spans and metrics written by hand.
 */
async function instrumented(
  core: typeof Core,
  otel: string | undefined,
): Promise<{
  handler: (request: Core.WebhookRequest) => Promise<Core.WebhookResult>;
  subscriber?: { enable: () => void; disable: () => unknown };
}> {
  const options = {
    secret: SECRET,
    // A clock that stands still: the store's work must not depend on how slowly callgrind runs.
    store: new core.MemoryStore({ now: () => 1_764_000_000_000 }),
  };
  const simple = otel === 'simple';
  if (otel !== undefined && args.includes('--hand')) {
    const { handWrittenDelivery } = await import('./otel.js');
    const hand = handWrittenDelivery(core, options, () => undefined, { simple });
    return { handler: hand.deliver, subscriber: { enable: () => undefined, disable: hand.flush } };
  }
  const webhook = core.createWebhookHandler({ ...options, handle: () => undefined });
  const handler = (request: Core.WebhookRequest) => webhook(request, undefined);
  const storeSpans = args.includes('--store-spans');
  if (otel === 'noop') return { handler, subscriber: noopSubscriber(PAYHOOK_CHANNELS) };
  if (otel === undefined) return { handler };
  return { handler, subscriber: (await import('./otel.js')).otelSubscriber({ simple, storeSpans }) };
}

/**
 * This file as plain JavaScript beside the packages (so `@payhook/*` resolve to their builds): under callgrind, tsx
 * would spend more instructions starting than the deliveries take.
 */
async function bundleChild(): Promise<string> {
  // One directory per run: a second run's bundle must not replace the file this one's processes start from.
  const outDir = fileURLToPath(
    new URL(`../node_modules/.cache/payhook-instructions/${process.pid}/`, import.meta.url),
  );
  const { build } = await import('tsup');
  await build({
    entry: { child: fileURLToPath(import.meta.url) },
    format: ['esm'],
    outDir,
    target: 'node20',
    external: [/^@payhook\//, /^@opentelemetry\//, 'tsup'],
    config: false,
    silent: true,
  });
  return join(outDir, 'child.js');
}

/** Subscribers that do nothing on the three tracing channels: what core's messages cost without any SDK. */
function noopSubscriber(channels: typeof PAYHOOK_CHANNELS): { enable: () => void; disable: () => void } {
  const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd() {}, error() {} };
  const names = [channels.delivery, channels.handler, channels.store];
  return {
    enable: () => {
      for (const name of names) tracingChannel(name).subscribe(handlers);
    },
    disable: () => {
      for (const name of names) tracingChannel(name).unsubscribe(handlers);
    },
  };
}

/** Instructions one process of `count` deliveries executed, from callgrind's summary. */
function instructions(script: string, child: string[], count: number): number {
  const run = spawnSync(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      // One thread, fixed seeds: the same process executes the same instructions, run after run.
      '--single-threaded',
      '--predictable',
      '--predictable-gc-schedule',
      '--hash-seed=1',
      '--random-seed=1',
      script,
      '--child',
      ...child,
      '--n',
      String(count),
    ],
    { encoding: 'utf8' },
  );
  const collected = /Collected\s*:\s*(\d+)/.exec(run.stderr);
  if (run.status !== 0 || !collected) throw new Error(`callgrind failed:\n${run.stderr.slice(-2_000)}`);
  return Number(collected[1]);
}

/** CPU time a delivery outside callgrind, beside its instructions: the median of three processes of 20,000. */
function cpuTime(script: string, child: string[]): string {
  const runs = [0, 1, 2].map(() => {
    const output = execFileSync(process.execPath, [script, '--child', ...child, '--n', '20000'], {
      encoding: 'utf8',
    });
    return Number.parseFloat(output);
  });
  return runs.sort((a, b) => a - b)[1]!.toFixed(2);
}

async function main(): Promise<void> {
  if (args.includes('--child')) {
    const path = option('--core');
    const core = (await import(path ? pathToFileURL(path).href : '@payhook/core')) as typeof Core;
    console.log(`${(await deliver(core, n, option('--otel'))).toFixed(2)} µs CPU a delivery`);
    return;
  }
  execFileSync('valgrind', ['--version']);
  const variants: [string, string[]][] = [['this build, no subscriber', []]];
  const against = option('--against');
  if (against) variants.push([`--against ${against}`, ['--core', against]]);
  const otel = option('--otel');
  if (otel) {
    const spans = args.includes('--store-spans') ? ['--store-spans'] : [];
    variants.push([
      `this build, OpenTelemetry SDK subscribed (${[otel, ...spans].join(' ')})`,
      ['--otel', otel, ...spans],
    ]);
    if (otel !== 'noop' && spans.length === 0) {
      variants.push([`hand-written instrumentation, same SDK (${otel})`, ['--otel', otel, '--hand']]);
    }
  }
  const script = await bundleChild();
  const counts = variants.map(([name, child]) => {
    const perDelivery = (instructions(script, child, 2 * n) - instructions(script, child, n)) / n;
    const cpu = args.includes('--no-cpu') ? '' : `; ${cpuTime(script, child)} µs CPU (median of 3 runs)`;
    console.log(`${name}: ${Math.round(perDelivery)} instructions a delivery${cpu}`);
    return perDelivery;
  });
  const [plain] = counts as [number];
  if (against) console.log(`no subscriber vs --against: ${((plain / counts[1]! - 1) * 100).toFixed(2)}%`);
  if (otel) console.log(`subscribed vs no subscriber: ${(counts[against ? 2 : 1]! / plain).toFixed(3)}x`);
  if (variants.at(-1)![1].includes('--hand')) handRatio(plain, counts.at(-2)!, counts.at(-1)!);
}

/** Issue 34's target: payhook's instrumentation at most 1.15x the hand-written one, whole and by its increment. */
function handRatio(plain: number, payhook: number, hand: number): void {
  const whole = payhook / hand;
  const increment = (payhook - plain) / (hand - plain);
  console.log(
    `payhook vs hand-written, a delivery: ${whole.toFixed(3)}x (target <= 1.15: ${whole <= 1.15 ? 'pass' : 'MISS'})`,
  );
  console.log(
    `payhook vs hand-written, the instrumentation alone (each minus no subscriber): ${increment.toFixed(3)}x`,
  );
}

await main();
