/**
 * `pnpm smoke`: what a merchant meets after `npm install`. Packs every package with pnpm, installs the tarballs
 * with npm into a fresh project in a temp dir, then on Node 20 (this machine), 22 and 24 (the npm registry's
 * `node` package): `import`s (ESM) and `require`s (CJS) each package and runs a signed delivery through core,
 * Express, Koa, Fastify and NestJS, traced by `@payhook/opentelemetry` into OpenTelemetry's in-memory exporter, and the `queue` option with `@payhook/queue` (a BullMQ and a PostgreSQL queue built without their servers); typechecks a TypeScript consumer under `moduleResolution` `node16` (ESM and CJS files) and
 * `bundler`; and runs the installed `payhook` CLI. It never asks a registry what is published, so it passes
 * whatever is already on npm (`pnpm release:rehearsal` publishes to a local registry). Needs the packages built.
 * `--nodes 20` limits the Node versions; `--keep` keeps the temp dir.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { packPackages } from './check-packages.ts';
import { runMain } from './run-main.ts';

const SECRET = 'smoke-secret';

const RUNTIME_CHECK = (load: string) => `${load}
const assert = (ok, what) => { if (!ok) { console.error('FAIL ' + what); process.exit(1); } };
for (const [name, mod] of Object.entries(packages)) assert(mod && typeof mod === 'object', name + ' loads');
const { core, express: adapter, koa: koaAdapter, fastify: fastifyAdapter, nestjs: nestAdapter } = packages;
for (const fn of ['createWebhookHandler', 'sign', 'createNodeListener', 'verifyNotification'])
  assert(typeof core[fn] === 'function', '@payhook/core exports ' + fn);
for (const fn of ['createMiddleware', 'toWebhookRequest', 'sendNodeResponse', 'refusal', 'fromParserError', 'encodeBase64Url', 'decodeBase64Url'])
  assert(typeof packages.coreAdapter[fn] === 'function', '@payhook/core/adapter exports ' + fn);
for (const fn of ['validatePaymentRequest', 'validateSplitPurchaseRequest', 'validateCard', 'createReconciler', 'createApiClient', 'hmacRequestSigner', 'createPaymentWatch'])
  assert(typeof packages.payments[fn] === 'function', '@payhook/payments exports ' + fn);
assert(typeof packages.relay.createRelay === 'function' && typeof packages.relayClient.connectRelay === 'function' && typeof packages.relayFile.FileJournal === 'function', '@payhook/relay, /client and /file load (pg and ioredis, optional peers, not needed)');
assert(typeof packages.paymentsRedis.RedisWatchStore === 'function' && typeof packages.paymentsPostgres.PostgresWatchStore === 'function', '@payhook/payments/redis and /postgres export the watch stores');
assert(typeof packages.capture.createCapture === 'function' && packages.capture.DEFAULT_MASKED_FIELDS.includes('cc_token'), '@payhook/core/capture exports createCapture and DEFAULT_MASKED_FIELDS');
assert(packages.diagnostics.PAYHOOK_CHANNELS.delivery === 'payhook:delivery', '@payhook/core/diagnostics exports PAYHOOK_CHANNELS');
assert(typeof packages.testingFake.startFakeServer === 'function' && typeof packages.testingFake.FakeService === 'function' && !('FakeService' in packages.testing) && typeof packages.testing.signWebhook === 'function', '@payhook/testing/fake exports the fake service, apart from the main entry');
assert(packages.coreAdapter.fromParserError({ type: 'entity.too.large' }) instanceof core.RequestError, '@payhook/core/adapter shares the error classes of @payhook/core');
assert(typeof adapter.webhookMiddleware === 'function', '@payhook/express exports webhookMiddleware');
assert(typeof koaAdapter.webhookMiddleware === 'function', '@payhook/koa exports webhookMiddleware');
assert(typeof fastifyAdapter.webhookPlugin === 'function', '@payhook/fastify exports webhookPlugin');
assert(fastifyAdapter.WebhookError === core.WebhookError, '@payhook/fastify re-exports core WebhookError');
assert(typeof nestAdapter.PayhookModule.forRoot === 'function' && typeof nestAdapter.OnNotification === 'function', '@payhook/nestjs exports PayhookModule and OnNotification');
assert(nestAdapter.WebhookError === core.WebhookError, '@payhook/nestjs re-exports core WebhookError');
assert(adapter.WebhookError === core.WebhookError, '@payhook/express re-exports core WebhookError');
assert(typeof packages.redis.RedisStore === 'function', '@payhook/core/redis exports RedisStore');
assert(typeof packages.postgres.PostgresStore === 'function' && typeof packages.postgres.migrate === 'function', '@payhook/core/postgres exports PostgresStore and migrate');
assert(typeof packages.queue.createWorker === 'function', '@payhook/queue exports createWorker');
// Built without a Redis (lazyConnect): the smoke has no services.
const bull = packages.bullmq.createBullMQQueue({ connection: { host: '127.0.0.1', port: 1, lazyConnect: true } });
assert(bull.name === 'bullmq' && typeof bull.enqueue === 'function' && typeof bull.consume === 'function', '@payhook/queue/bullmq builds a queue');
await bull.close();
// Built without a PostgreSQL: the pool and pg-boss connect on first use.
const boss = packages.pgboss.createPostgresQueue({ connectionString: 'postgres://127.0.0.1:1/none' });
assert(boss.name === 'postgres' && typeof boss.enqueue === 'function' && typeof boss.consume === 'function', '@payhook/queue/postgres builds a queue');
await boss.close();

const notification = { payment_id: 'p-1', order_id: 'o-1', pos_id: 'pos-1', mode: 'direct', method: 'purchase',
  amount: 10, currency: 'XTS', status: 'success', status_code: '1000', created_at: '2026-01-01T00:00:00' };
const data = packages.coreAdapter.encodeBase64Url(JSON.stringify(notification));
const body = new URLSearchParams({ data, signature: core.sign(data, ${JSON.stringify(SECRET)}) }).toString();
assert(core.verifyNotification(body, ${JSON.stringify(SECRET)}).order_id === 'o-1', 'verifyNotification reads a signed body');
const tampered = new URLSearchParams({ data: data.slice(0, -4) + 'AAA=', signature: core.sign(data, ${JSON.stringify(SECRET)}) }).toString();
const headers = { 'content-type': 'application/x-www-form-urlencoded' };
const jobs = [];
const web = core.createWebhookHandler({ secret: ${JSON.stringify(SECRET)}, logger: false, queue: { enqueue: async (job) => (jobs.push(job), 'queued') } }).on('purchase', () => {});
const answered = await web({ method: 'POST', headers, body }, undefined);
assert(answered.body === '{"ok":true,"outcome":"queued"}' && jobs.length === 1 && jobs[0].data.order_id === 'o-1', 'the queue option answers queued: ' + answered.body);

async function post(port, payload) {
  const response = await fetch('http://127.0.0.1:' + port + '/webhook', { method: 'POST', headers, body: payload });
  return response.status + ' ' + (await response.text());
}
async function serve(server, label, seen) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  try {
    assert((await post(port, body)) === '200 {"ok":true,"outcome":"handled"}', label + ' handles a signed delivery');
    assert((await post(port, body)) === '200 {"ok":true,"outcome":"duplicate"}', label + ' drops the duplicate');
    const refused = await post(port, tampered);
    assert(refused.startsWith('401 ') && refused.includes('"code":"signature.invalid"'), label + ' refuses a tampered one: ' + refused);
    assert(seen.length === 1 && seen[0] === 'o-1', label + ' ran the handler once');
  } finally {
    server.closeAllConnections?.();
    await new Promise((resolve) => server.close(resolve));
  }
}

const spans = new otelSdk.InMemorySpanExporter();
const instrumentation = new packages.opentelemetry.PayhookInstrumentation({ enabled: false });
instrumentation.setTracerProvider(new otelSdk.BasicTracerProvider({ spanProcessors: [new otelSdk.SimpleSpanProcessor(spans)] }));
instrumentation.enable();
const handled = [];
const webhook = core.createWebhookHandler({ secret: ${JSON.stringify(SECRET)}, logger: false, handle: (n) => handled.push(n.order_id) });
await serve(http.createServer(core.createNodeListener(webhook)), 'node:http', handled);
instrumentation.disable();
const traced = spans.getFinishedSpans().filter((span) => span.name.startsWith('process '))
  .map((span) => span.name + ' ' + (span.attributes['error.type'] ?? span.attributes['payhook.outcome'])).join(', ');
assert(traced === 'process purchase.success handled, process purchase.success duplicate, process payhook signature.invalid', '@payhook/opentelemetry traces the deliveries: ' + traced);

const expressSeen = [];
const app = expressLib();
app.post('/webhook', adapter.webhookMiddleware({ secret: ${JSON.stringify(SECRET)}, logger: false }).on('purchase.success', (p) => { expressSeen.push(p.order_id); }));
await serve(http.createServer(app), 'express', expressSeen);

const koaSeen = [];
const koaApp = new KoaLib();
koaApp.use(koaAdapter.webhookMiddleware({ secret: ${JSON.stringify(SECRET)}, logger: false }).on('purchase', (p) => { koaSeen.push(p.order_id); }));
await serve(http.createServer(koaApp.callback()), 'koa', koaSeen);

const fastifySeen = [];
const fastifyApp = fastifyLib();
await fastifyApp.register(fastifyAdapter.webhookPlugin({ secret: ${JSON.stringify(SECRET)}, logger: false, path: '/webhook' }).on('purchase', (p, request) => { fastifySeen.push(p.order_id); }));
await fastifyApp.ready();
await serve(fastifyApp.server, 'fastify', fastifySeen);
// Decorators applied by hand: plain JavaScript has no decorator syntax.
const nestSeen = [];
class Orders { fulfil(payment) { nestSeen.push(payment.order_id); } }
nestAdapter.OnNotification('purchase.success')(Orders.prototype, 'fulfil', Object.getOwnPropertyDescriptor(Orders.prototype, 'fulfil'));
class NestAppModule {}
nestCommon.Module({
  imports: [nestAdapter.PayhookModule.forRoot({ secret: ${JSON.stringify(SECRET)}, logger: false, path: '/webhook' })],
  providers: [{ provide: Orders, useFactory: () => new Orders() }],
})(NestAppModule);
const nestApp = await nestCore.NestFactory.create(NestAppModule, { logger: false, abortOnError: false });
await nestApp.init();
await serve(nestApp.getHttpServer(), 'nestjs', nestSeen);
await nestApp.close();
console.log('ok ' + process.version + ' ' + MODE);
`;

/** What a consumer installs beside the packages: the adapters' frameworks (their peer dependencies). */
export const FRAMEWORKS: string[] = [
  'express@^5',
  'koa@^3',
  'fastify@^5',
  '@nestjs/common@^12',
  '@nestjs/core@^12',
  '@nestjs/platform-express@^12',
  'reflect-metadata@^0.2',
  'rxjs@^7',
  // @payhook/opentelemetry's peer, and the SDK a merchant runs beside it.
  '@opentelemetry/api@^1',
  '@opentelemetry/sdk-trace-base@^2',
  // @payhook/queue/bullmq's peer, and the Redis client BullMQ connects with.
  'bullmq@^6',
  'ioredis@^5',
  // @payhook/queue/postgres's peers.
  'pg-boss@^10',
  'pg@^8',
];

/** An ES module that loads every package and runs a signed delivery through core, Express, Koa, Fastify and NestJS. */
export const ESM: string = RUNTIME_CHECK(`const MODE = 'esm';
import http from 'node:http';
import expressLib from 'express';
import KoaLib from 'koa';
import fastifyLib from 'fastify';
import * as nestCommon from '@nestjs/common';
import * as nestCore from '@nestjs/core';
import * as corePkg from '@payhook/core';
import * as expressPkg from '@payhook/express';
import * as koaPkg from '@payhook/koa';
import * as fastifyPkg from '@payhook/fastify';
import * as nestjsPkg from '@payhook/nestjs';
import * as testingPkg from '@payhook/testing';
import * as testingFakePkg from '@payhook/testing/fake';
import * as redisPkg from '@payhook/core/redis';
import * as postgresPkg from '@payhook/core/postgres';
import * as coreAdapterPkg from '@payhook/core/adapter';
import * as paymentsPkg from '@payhook/payments';
import * as paymentsRedisPkg from '@payhook/payments/redis';
import * as paymentsPostgresPkg from '@payhook/payments/postgres';
import * as relayPkg from '@payhook/relay';
import * as relayClientPkg from '@payhook/relay/client';
import * as relayFilePkg from '@payhook/relay/file';
import * as capturePkg from '@payhook/core/capture';
import * as diagnosticsPkg from '@payhook/core/diagnostics';
import * as opentelemetryPkg from '@payhook/opentelemetry';
import * as queuePkg from '@payhook/queue';
import * as bullmqPkg from '@payhook/queue/bullmq';
import * as pgbossPkg from '@payhook/queue/postgres';
import * as otelSdk from '@opentelemetry/sdk-trace-base';
const packages = { core: corePkg, express: expressPkg, koa: koaPkg, fastify: fastifyPkg, nestjs: nestjsPkg, testing: testingPkg, testingFake: testingFakePkg, redis: redisPkg, postgres: postgresPkg, coreAdapter: coreAdapterPkg, payments: paymentsPkg, paymentsRedis: paymentsRedisPkg, paymentsPostgres: paymentsPostgresPkg, relay: relayPkg, relayClient: relayClientPkg, relayFile: relayFilePkg, capture: capturePkg, diagnostics: diagnosticsPkg, opentelemetry: opentelemetryPkg, queue: queuePkg, bullmq: bullmqPkg, pgboss: pgbossPkg };`);

const CJS = `(async () => {${RUNTIME_CHECK(`const MODE = 'cjs';
const http = require('node:http');
const expressLib = require('express');
const KoaLib = require('koa');
const fastifyLib = require('fastify');
const nestCommon = require('@nestjs/common');
const nestCore = require('@nestjs/core');
const otelSdk = require('@opentelemetry/sdk-trace-base');
const packages = { opentelemetry: require('@payhook/opentelemetry'), core: require('@payhook/core'), express: require('@payhook/express'), koa: require('@payhook/koa'), fastify: require('@payhook/fastify'), nestjs: require('@payhook/nestjs'), testing: require('@payhook/testing'), testingFake: require('@payhook/testing/fake'), redis: require('@payhook/core/redis'), postgres: require('@payhook/core/postgres'), coreAdapter: require('@payhook/core/adapter'), payments: require('@payhook/payments'), paymentsRedis: require('@payhook/payments/redis'), paymentsPostgres: require('@payhook/payments/postgres'), relay: require('@payhook/relay'), relayClient: require('@payhook/relay/client'), relayFile: require('@payhook/relay/file'), capture: require('@payhook/core/capture'), diagnostics: require('@payhook/core/diagnostics'), queue: require('@payhook/queue'), bullmq: require('@payhook/queue/bullmq'), pgboss: require('@payhook/queue/postgres') };`)}})().catch((error) => { console.error(error); process.exit(1); });\n`;

const TYPED = `import type { IncomingMessage } from 'node:http';
import { createNodeListener, createWebhookHandler, type Notification, type WebhookErrorCode, WebhookError } from '@payhook/core';
import { webhookMiddleware } from '@payhook/express';
import { webhookMiddleware as koaWebhook } from '@payhook/koa';
import { webhookPlugin } from '@payhook/fastify';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { PayhookModule, type PayhookModuleOptions } from '@payhook/nestjs';
import * as testing from '@payhook/testing';
import { type FakeServer, startFakeServer } from '@payhook/testing/fake';
import { RedisStore } from '@payhook/core/redis';
import { PostgresStore } from '@payhook/core/postgres';
import { sendNodeResponse, toWebhookRequest } from '@payhook/core/adapter';
import { ApiError, createReconciler, type PaymentRequest, type ReconcileReport, validatePaymentRequest } from '@payhook/payments';
import { type CaptureOptions, createCapture } from '@payhook/core/capture';
import { type DeliveryMessage, PAYHOOK_CHANNELS } from '@payhook/core/diagnostics';
import { PayhookInstrumentation, type PayhookInstrumentationConfig } from '@payhook/opentelemetry';
import { createWorker, type QueueEngine, type QueueWorker } from '@payhook/queue';
import { createBullMQQueue } from '@payhook/queue/bullmq';
import { createPostgresQueue } from '@payhook/queue/postgres';

export const stores = [RedisStore, PostgresStore] as const;
const webhook = createWebhookHandler<IncomingMessage>({ secret: ['current', { id: 'old', secret: 'previous' }], maxBodyBytes: 65_536 })
  .on('purchase.success', (payment, req) => { const order: string = payment.order_id; void order; void req?.url; })
  .on('refund', (refund, _req, delivery) => { const id: string = refund.operation_id; const index: number = delivery.secretIndex; void id; void index; })
  .onAny((notification: Notification) => void notification.status);
export const listener = createNodeListener(webhook);
export const fetchHandler = (request: Request): Promise<Response> => webhook.fetch(request);
export const code = (error: unknown): WebhookErrorCode | undefined => (error instanceof WebhookError ? error.code : undefined);
export const expressMiddleware = webhookMiddleware({ secret: 's' }).on('purchase', (payment, req) => void [payment.amount, req?.body]);
export const koaMiddleware = koaWebhook({ secret: 's' }).on('refund.success', (refund) => void refund.amount);
export const fastifyPlugin: FastifyPluginAsync = webhookPlugin({ secret: 's', path: '/webhooks' }).on('purchase', (payment, request: FastifyRequest | undefined) => void [payment.amount, request?.url]);
const nestOptions: PayhookModuleOptions = { secret: 's', path: '/webhooks', forwardErrors: true };
export const nestModules = [
  PayhookModule.forRoot(nestOptions),
  PayhookModule.forRootAsync({ useFactory: async () => ({ secret: 's' }) }),
];
export const testingExports: string[] = Object.keys(testing);
export const fakeServer = (): Promise<FakeServer> => startFakeServer({ secret: 's', seed: 1 });
export const routed = async (req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> =>
  sendNodeResponse(res, await webhook(toWebhookRequest(req), req));
export const checked = (request: PaymentRequest): boolean => validatePaymentRequest(request).valid;
export const reconcile = (): Promise<ReconcileReport> =>
  createReconciler({ webhook, api: { baseUrl: 'https://pay.test', posId: 'p', apiKey: 'k', endpointsKey: 'e', apiSecret: 's' }, listPending: () => [{ orderId: 'o-1' }] }).run();
export const apiCode = (error: unknown): string | undefined => (error instanceof ApiError ? error.code : undefined);
const captureOptions: CaptureOptions = { write: () => {}, maxQueue: 10 };
export const captured = createWebhookHandler({ secret: 's', capture: createCapture(captureOptions) });
export const deliveryChannel: string = PAYHOOK_CHANNELS.delivery;
export const outcomeOf = (message: DeliveryMessage): string | undefined => message.outcome;
const otelConfig: PayhookInstrumentationConfig = { enabled: false };
export const instrumentation: { instrumentationName: string } = new PayhookInstrumentation(otelConfig);
export const makeQueue = (): QueueEngine => createBullMQQueue({ connection: 'redis://127.0.0.1:6379', attempts: 5 });
export const makePostgresQueue = (): QueueEngine => createPostgresQueue({ connectionString: 'postgres://127.0.0.1/test', backoff: { type: 'fixed', delayMs: 1_000 } });
export const queuedWebhook = createWebhookHandler({ secret: 's', queue: makeQueue() }).on('purchase', () => {});
export const startWorker = (engine: QueueEngine): Promise<QueueWorker> => createWorker(queuedWebhook, engine, { concurrency: 2 });
`;

function tsconfig(moduleKind: string, resolution: string, include: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      module: moduleKind,
      moduleResolution: resolution,
      target: 'ES2022',
      lib: ['ES2023', 'DOM'],
      strict: true,
      noEmit: true,
      // @types/koa fails its own check against the current content-disposition; merchants skip lib checks too.
      skipLibCheck: true,
      types: ['node'],
    },
    include,
  });
}

export function sh(command: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: env ?? process.env });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** The path of a `node` binary of the given major version (this process's own for its version). */
export function nodeBinary(major: string, cwd: string): string {
  if (process.versions.node.split('.')[0] === major) return process.execPath;
  return sh('npx', ['-y', '-p', `node@${major}`, 'sh', '-c', 'command -v node'], cwd).trim();
}

function main(): void {
  const { values } = parseArgs({
    options: { nodes: { type: 'string', default: '20,22,24' }, keep: { type: 'boolean' } },
  });
  const majors = values.nodes.split(',').map((v) => v.trim());
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'payhook-smoke-'));
  const lap = (what: string) =>
    console.log(`smoke: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  try {
    const tarballs = packPackages(join(work, 'tarballs'));
    lap(`packed ${tarballs.size} packages`);

    const app = join(work, 'consumer');
    mkdirSync(join(app, 'src'), { recursive: true });
    const dependencies: Record<string, string> = {};
    for (const [name, tarball] of tarballs) dependencies[name] = `file:${tarball}`;
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify(
        { name: 'payhook-smoke-consumer', private: true, type: 'module', dependencies },
        null,
        2,
      ),
    );
    writeFileSync(join(app, '.npmrc'), 'fund=false\naudit=false\nupdate-notifier=false\n');
    // Dependencies a merchant brings: the frameworks (peers of the adapters) and TypeScript with Node types.
    sh(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        ...[...tarballs.values()],
        ...FRAMEWORKS,
        'typescript@~5.9',
        '@types/node@^20',
        '@types/express@^5',
        '@types/koa@^3',
      ],
      app,
    );
    lap('installed the tarballs with npm into a fresh project');

    writeFileSync(join(app, 'src', 'esm.mjs'), ESM);
    writeFileSync(join(app, 'src', 'cjs.cjs'), CJS);
    writeFileSync(join(app, 'src', 'consumer.ts'), TYPED);
    writeFileSync(
      join(app, 'src', 'consumer.cts'),
      TYPED.replace(
        /^import \* as testing from '@payhook\/testing';$/m,
        "import testing = require('@payhook/testing');",
      ),
    );
    writeFileSync(
      join(app, 'tsconfig.node16.json'),
      tsconfig('node16', 'node16', ['src/consumer.ts', 'src/consumer.cts']),
    );
    writeFileSync(join(app, 'tsconfig.bundler.json'), tsconfig('esnext', 'bundler', ['src/consumer.ts']));
    const tsc = join(app, 'node_modules', 'typescript', 'bin', 'tsc');
    for (const config of ['tsconfig.node16.json', 'tsconfig.bundler.json']) {
      sh(process.execPath, [tsc, '-p', config], app);
      lap(`typechecked the consumer with ${config}`);
    }

    for (const major of majors) {
      const node = nodeBinary(major, app);
      for (const file of ['src/esm.mjs', 'src/cjs.cjs']) {
        const out = sh(node, [file], app).trim();
        const expected = new RegExp(`^ok v${major}\\.\\S+ ${file.includes('esm') ? 'esm' : 'cjs'}$`);
        if (!expected.test(out)) throw new Error(`${file} on Node ${major} printed ${JSON.stringify(out)}`);
        lap(
          `Node ${out.split(' ')[1]}: ${file} ran a delivery through core, Express, Koa, Fastify and NestJS`,
        );
      }
    }

    const help = sh(join(app, 'node_modules', '.bin', 'payhook'), ['--help'], app);
    if (!help.startsWith('Usage: payhook')) throw new Error(`payhook --help printed ${JSON.stringify(help)}`);
    lap('the installed payhook CLI answers --help');

    console.log(`smoke: passed on Node ${majors.join(', ')}`);
  } finally {
    if (values.keep) console.log(`smoke: kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

runMain(import.meta.url, 'smoke', main);
