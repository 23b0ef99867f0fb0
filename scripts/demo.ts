/**
 * `pnpm demo`: starts each example server (Express, then Koa, Fastify and NestJS), posts it signed webhooks over
 * HTTP as the payment service would, and prints what the server answered and what reached the application handler. Exits 0 only when
 * every answer and every handler call was the expected one.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { type ExampleName, type RunningExample, startExample } from '../examples/shared/src/child.ts';
import type { NotificationLine } from '../examples/shared/src/output.ts';
import { type DemoStep, demoSteps } from './demo-steps.ts';

interface Row {
  step: DemoStep;
  got: string;
  printed: string;
  ok: boolean;
}

const SECRET = randomBytes(24).toString('base64url');

function pad(text: string, width: number): string {
  return text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);
}

async function post(url: string, step: DemoStep): Promise<string> {
  const res = await fetch(`${url}/webhooks`, {
    method: 'POST',
    headers: { 'content-type': step.contentType },
    body: step.body,
  });
  const body = (await res.json()) as { outcome?: string; error?: { code: string } };
  return `${res.status} ${body.error?.code ?? body.outcome}`;
}

/** What the handler printed, short: method, status, order, and the operation or charge when there is one. */
function describeLine(line: NotificationLine): string {
  const parts = [line.method, line.status, line.order_id];
  if (line.operation_id) parts.push(`operation ${line.operation_id.slice(0, 8)}`);
  if (line.recurring_id) parts.push(`${line.recurring_id} ${line.transaction_id}`);
  return parts.join(' ');
}

/** Pairs each answer with the line the handler printed for it: handled steps print one line each, in order. */
function match(steps: DemoStep[], answers: string[], lines: NotificationLine[]): Row[] {
  const queue = [...lines];
  const rows = steps.map((step, i): Row => {
    const got = answers[i]!;
    const line = got === '200 handled' ? queue.shift() : undefined;
    const printed = line ? describeLine(line) : '-';
    const ok =
      got === step.expected && (step.key === undefined ? line === undefined : line?.key === step.key);
    return { step, got, printed, ok };
  });
  if (queue.length > 0) {
    rows.push({
      step: { what: 'lines printed for no handled answer', contentType: '', body: '', expected: 'none' },
      got: String(queue.length),
      printed: queue.map((l) => l.key).join(', '),
      ok: false,
    });
  }
  return rows;
}

function printRows(rows: Row[]): void {
  console.log(
    `  ${pad('#', 3)}${pad('webhook sent', 42)}${pad('expected', 24)}${pad('got', 24)}handler ran for`,
  );
  rows.forEach((row, i) => {
    const cells = [
      pad(String(i + 1), 3),
      pad(row.step.what, 42),
      pad(row.step.expected, 24),
      pad(row.got, 24),
    ];
    console.log(`${row.ok ? '✔' : '✘'} ${cells.join('')}${row.printed}`);
  });
}

async function runAgainst(name: ExampleName): Promise<boolean> {
  const example = await startExample(name, SECRET);
  console.log(`\n▶ examples/${name}: listening on ${example.url}, webhooks at POST /webhooks`);
  const steps = demoSteps(SECRET);
  const answers: string[] = [];
  try {
    for (const step of steps) answers.push(await post(example.url, step));
  } finally {
    const exit = await example.stop();
    if (exit.code !== 0) console.log(`  the server exited with ${exit.code ?? exit.signal} instead of 0`);
  }
  const rows = match(steps, answers, example.lines);
  printRows(rows);
  const good = rows.filter((row) => row.ok).length;
  console.log(`  ${good} of ${rows.length} as expected on ${name}`);
  return good === rows.length;
}

/** True when something accepts a TCP connection at the URL's host and port within a second. */
function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379), timeout: 1_000 });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket
      .once('connect', () => done(true))
      .once('error', () => done(false))
      .once('timeout', () => done(false));
  });
}

/**
 * examples/queue: the web process answers `200 queued` where the others answer `200 handled`, and its worker prints
 * the handled lines (in whatever order the jobs ran). On a queue and key prefix of its own, so a rerun starts empty.
 */
async function runAgainstQueue(): Promise<boolean> {
  const redis = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  if (!(await reachable(redis))) {
    console.log(`\n▶ examples/queue: skipped, no Redis at ${redis} (set REDIS_URL, or start redis-server)`);
    return true;
  }
  const run = randomBytes(4).toString('hex');
  const env = {
    REDIS_URL: redis,
    PAYHOOK_QUEUE: `payhook-demo-${run}`,
    PAYHOOK_PREFIX: `payhook-demo-${run}:`,
  };
  const web = await startExample('queue', SECRET, 30_000, { env });
  let worker: RunningExample | undefined;
  const steps = demoSteps(SECRET).map((step) =>
    step.expected === '200 handled' ? { ...step, expected: '200 queued' } : step,
  );
  const answers: string[] = [];
  try {
    worker = await startExample('queue', SECRET, 30_000, { script: 'src/worker.ts', env });
    console.log(
      `\n▶ examples/queue: listening on ${web.url}, a worker running the handlers (BullMQ on ${redis})`,
    );
    for (const step of steps) answers.push(await post(web.url, step));
    const queued = steps.filter((step) => step.key !== undefined).length;
    await Promise.race([worker.waitForLines(queued), new Promise((resolve) => setTimeout(resolve, 15_000))]);
  } finally {
    for (const example of [web, worker]) {
      const exit = await example?.stop();
      if (exit && exit.code !== 0)
        console.log(`  a process exited with ${exit.code ?? exit.signal} instead of 0`);
    }
  }
  const printed = new Map((worker?.lines ?? []).map((line) => [line.key, line]));
  const rows = steps.map((step, i): Row => {
    const line = step.key === undefined ? undefined : printed.get(step.key);
    const ok = answers[i] === step.expected && (step.key === undefined || line !== undefined);
    return { step, got: answers[i]!, printed: line ? describeLine(line) : '-', ok };
  });
  printRows(rows);
  const good = rows.filter((row) => row.ok).length;
  const extra = (worker?.lines.length ?? 0) - printed.size;
  if (extra > 0) console.log(`✘ the worker printed ${extra} line(s) twice`);
  console.log(`  ${good} of ${rows.length} as expected on queue (the worker printed ${printed.size} lines)`);
  return good === rows.length && extra <= 0;
}

console.log(`payhook demo
The payment service POSTs each change of a payment to your server as a form: data (the notification, base64url
JSON) and signature (sha256 over secret + data + secret). payhook checks the signature in constant time, reads
the notification, answers 200 once it was handled, and calls your handler at most once per notification:
redeliveries (the service may send one more than once) answer 200 duplicate without calling it again.
Refusals answer 4xx with a JSON reason; 500/503 ask the service to retry.
Here each example server is started with a fresh secret, and the webhooks below are posted to it over HTTP.
"handler ran for" is what the server's handler printed (method, status, operation).`);

let allGood = await runAgainst('express');
console.log(`  Why: 3 and 4 are the notification of 2 again (same payment, method, status and status_code), so the
  handler is not called twice, even when a redelivery carries new fields. 5 is refused because the signature
  covers data byte for byte. 7 and 8 are two charges of one subscription: different transaction_id, both handled.
  9 is not a delivery at all. The same webhooks now go to the other examples:`);
// One entry per example after Express, which the explanation above follows.
for (const name of ['koa', 'fastify', 'nestjs'] as const) allGood = (await runAgainst(name)) && allGood;
allGood = (await runAgainstQueue()) && allGood;
console.log(
  allGood
    ? '\n✔ every answer was the expected one: same answers from every example, each notification handled once.'
    : '\n✘ some answers were not the expected ones (marked ✘ above).',
);
process.exitCode = allGood ? 0 : 1;
