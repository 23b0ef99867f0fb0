/**
 * `pnpm runtimes`: `handler.fetch` and the API client on the runtimes besides Node.js, and the relay in workerd. Packs
 * @payhook/core, @payhook/payments and @payhook/relay, installs the tarballs with npm into a fresh project together with the runtimes from npm (`bun`, `deno`, and
 * `miniflare` with its `workerd`; npm takes the newest releases whose `engines` accept this Node.js), starts the
 * fake payment service (`startFakeServer` of @payhook/testing) in this process, then:
 *
 * - on Bun and on Deno, runs a signed delivery, its redelivery, a tampered copy, and three concurrent copies of
 *   another (handled once) through `handler.fetch`; then, through `createApiClient` of `@payhook/payments`
 *   against the fake, creates a hosted payment, a direct one and a direct 3-D Secure one, re-sends one, and checks
 *   the typed answers, a refusal of a wrong secret, an invalid request refused before it is sent, a partial
 *   refund, one above what is left refused before it is sent, and the order's operations;
 * - in workerd, through miniflare, runs the Cloudflare Workers recipe of docs/recipes.md (its `src/worker.ts`,
 *   bundled with esbuild as wrangler does, under its `wrangler.toml`'s compatibility date and flags: no
 *   `nodejs_compat`, so core hashes and decodes without `node:` modules, and the client signs with Web Crypto)
 *   the same way, the client's calls from inside the Worker, then again with `nodejs_compat` added (core then
 *   takes `node:crypto` and `node:buffer` where the runtime offers them);
 * - in workerd, with and without `nodejs_compat`, the relay: `createRelay` of the packed @payhook/relay on its
 *   memory journal, bundled as a Worker: two channels created, a long-poll held on the empty one, a delivery in
 *   (answered once journaled), the long-poll woken with it, the SSE stream giving it too, its bytes and SHA-256 as
 *   sent, its `X-Payhook-Relay` header verified with the channel's key, another channel's token 403.
 *
 * Each prints `<runtime> <version>: 200 handled, then 200 duplicate` and `<runtime> <version>: client <CLIENT>`;
 * anything else fails the script. Needs core, payments and relay built (`pnpm runtimes` builds them). `--keep` keeps the temp dir.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { signedForm } from '../test/support/signed-form.ts';
import { packPackages, ROOT } from './check-packages.ts';
import { runMain } from './run-main.ts';
import { sh } from './smoke.ts';

const SECRET = 'runtimes-secret';
/** What every runtime must print after its name and version. */
export const EXPECTED = '200 handled, then 200 duplicate';
/** What every runtime must print after its name, its version and `client`. */
const CLIENT_EXPECTED =
  'hosted 303, direct success, 3-D Secure pending, resend 200, wrong secret api.unauthorized, invalid api.request_invalid, refund 4 success, over api.amount_exceeded, status purchase then refund';

/** The deliveries and their checks, as an ES module any runtime runs; `deliver(fetch)` answers the line's tail. */
const DELIVERIES = `import { sign } from '@payhook/core';
import { encodeBase64Url } from '@payhook/core/adapter';
const SECRET = ${JSON.stringify(SECRET)};
const form = (orderId) => {
  const data = encodeBase64Url(JSON.stringify({ payment_id: 'p-' + orderId, order_id: orderId, pos_id: 'pos-1',
    mode: 'direct', method: 'purchase', amount: 10, currency: 'XTS', status: 'success', status_code: '1000',
    created_at: '2026-01-01T00:00:00' }));
  return { data, signature: sign(data, SECRET) };
};
const signed = new URLSearchParams(form('o-1')).toString();
const tampered = new URLSearchParams({ ...form('o-1'), data: form('o-1').data.slice(0, -4) + 'AAA=' }).toString();
/** Its handler takes a while: the copies arrive while it runs. */
const concurrent = new URLSearchParams(form('slow-1')).toString();

/**
 * Posts a delivery, its redelivery and a tampered copy, then three copies of another at once, through \`send\`;
 * \`handled()\` lists the orders the handler ran for.
 */
export async function deliver(send, handled) {
  const post = async (body) => {
    const response = await send(new Request('http://payhook.test/webhooks', { method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }));
    return { status: response.status, body: await response.json() };
  };
  const answers = [await post(signed), await post(signed)];
  const line = answers.map((a) => a.status + ' ' + (a.body.outcome ?? JSON.stringify(a.body))).join(', then ');
  if (line !== ${JSON.stringify(EXPECTED)}) throw new Error('a delivery and its redelivery got ' + line);
  const refused = await post(tampered);
  if (refused.status !== 401 || refused.body.error?.code !== 'signature.invalid')
    throw new Error('a tampered delivery got ' + JSON.stringify(refused));
  const copies = (await Promise.all([post(concurrent), post(concurrent), post(concurrent)]))
    .map((a) => a.status + ' ' + a.body.outcome).sort();
  if (JSON.stringify(copies) !== '["200 duplicate","200 duplicate","200 handled"]')
    throw new Error('three concurrent copies got ' + JSON.stringify(copies));
  const orders = await handled();
  if (JSON.stringify(orders) !== '["o-1","slow-1"]') throw new Error('the handler ran for ' + JSON.stringify(orders));
  return line;
}
`;

/**
 * The API client's calls against the fake, as an ES module any runtime runs: `useClient(api, prefix)` answers
 * the client line's tail, or throws saying which answer was wrong.
 */
const CLIENT = `import { ApiError, createApiClient } from '@payhook/payments';
const card = (number) => ({ cc_number: number, exp_month: 12, exp_year: 2031, card_cvv: '737' });
const failure = async (promise) => promise.then(() => undefined, (error) => error instanceof ApiError ? error.code : String(error));
export async function useClient(api, prefix) {
  const client = createApiClient(api);
  const order = (name) => prefix + '-' + name;
  const wrong = (what, answer) => new Error(what + ' answered ' + JSON.stringify(answer));
  const hosted = await client.createPayment({ mode: 'hosted', method: 'purchase', amount: 10, order_id: order('hosted') });
  if (hosted.kind !== 'hosted' || hosted.checkoutUrl !== api.baseUrl + '/api/v1/checkout/' + hosted.checkoutId + '/form')
    throw wrong('a hosted payment', hosted);
  const purchase = { mode: 'direct', method: 'purchase', amount: 10.5, currency: 'UAH' };
  const direct = await client.createPayment({ ...purchase, order_id: order('direct'), ...card('4242424242424242') });
  if (direct.kind !== 'direct' || direct.record.status !== 'success' || direct.record.order_id !== order('direct'))
    throw wrong('a direct payment', direct);
  const threeDs = await client.createPayment({ ...purchase, order_id: order('3ds'), ...card('4000000000003220') });
  if (threeDs.kind !== 'direct' || threeDs.record.status !== 'pending' || !threeDs.record.user_action_url?.startsWith(api.baseUrl + '/'))
    throw wrong('a direct 3-D Secure payment', threeDs);
  const resent = await client.resend({ orderId: order('direct') });
  if (resent.status !== 200 || resent.record?.payment_id !== direct.record.payment_id) throw wrong('a re-send', resent);
  const unsigned = await failure(createApiClient({ ...api, apiSecret: 'not-the-secret' }).resend({ orderId: order('direct') }));
  const invalid = await failure(client.createPayment({ mode: 'hosted', method: 'purchase', amount: 10.555, order_id: order('invalid') }));
  const refund = await client.refund({ orderId: order('direct'), amount: 4, currency: 'UAH' });
  const over = await failure(client.refund({ orderId: order('direct'), amount: 7, currency: 'UAH' }));
  const operations = await client.getOperations(order('direct'));
  return 'hosted ' + (hosted.kind === 'hosted' ? 303 : '?') + ', direct ' + direct.record.status + ', 3-D Secure '
    + threeDs.record.status + ', resend ' + resent.status + ', wrong secret ' + unsigned + ', invalid ' + invalid
    + ', refund ' + refund.amount + ' ' + refund.status + ', over ' + over + ', status ' + operations.map((o) => o.method).join(' then ');
}
`;

/** Bun and Deno: the client over the runtime's own fetch; the fake's settings come as the first argument. */
const CLIENT_CHECK = `import { useClient } from './client.mjs';
const [name, version, args] = typeof Bun !== 'undefined' ? ['bun', Bun.version, process.argv.slice(2)]
  : ['deno', Deno.version.deno, Deno.args];
const { api, prefix } = JSON.parse(args[0]);
console.log(name + ' ' + version + ': client ' + (await useClient(api, prefix)));
`;

/** Bun and Deno: the handler built here, called with Fetch Requests. */
const FETCH_CHECK = `import { createWebhookHandler } from '@payhook/core';
import { deliver } from './deliveries.mjs';
const handled = [];
const webhook = createWebhookHandler({ secret: ${JSON.stringify(SECRET)}, logger: false })
  .on('purchase.success', async (payment) => {
    handled.push(payment.order_id);
    if (payment.order_id.startsWith('slow')) await new Promise((resolve) => setTimeout(resolve, 200));
  });
const [name, version] = typeof Bun !== 'undefined' ? ['bun', Bun.version] : typeof Deno !== 'undefined'
  ? ['deno', Deno.version.deno] : ['node', process.versions.node];
console.log(name + ' ' + version + ': ' + (await deliver((request) => webhook.fetch(request), async () => handled)));
`;

/** The recipe's application functions, recorded; a test route lists what they saw. */
const WORKER_APP = `const orders = [];
globalThis.fulfil = async (orderId) => {
  orders.push(orderId);
  if (orderId.startsWith('slow')) await new Promise((resolve) => setTimeout(resolve, 200));
};
globalThis.recordRefund = async () => {};
export const fulfilled = () => orders;
`;
const WORKER_ENTRY = `import { useClient } from '../client.mjs';
import { fulfilled } from './app.js';
import worker from './worker.ts';
export default {
  async fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    if (pathname === '/test/fulfilled') return Response.json(fulfilled());
    if (pathname === '/test/client') {
      const { api, prefix } = await request.json();
      try {
        return new Response(await useClient(api, prefix));
      } catch (error) {
        return new Response(String(error?.stack ?? error), { status: 500 });
      }
    }
    return worker.fetch(request, env, ctx);
  },
};
`;

/** Node.js drives miniflare: the recipe's Worker under the compatibility date and flags given. */
const WORKERD_CHECK = `import { createRequire } from 'node:module';
import { Miniflare } from 'miniflare';
import { deliver } from './deliveries.mjs';
const require = createRequire(import.meta.url);
const { compatibilityDate, compatibilityFlags, api, prefix } = JSON.parse(process.argv[2]);
const mf = new Miniflare({ modules: true, scriptPath: 'dist/worker.js', compatibilityDate, compatibilityFlags,
  bindings: { WEBHOOK_SECRET: ${JSON.stringify(SECRET)} } });
try {
  const send = async (request) => mf.dispatchFetch(request.url, { method: request.method,
    headers: Object.fromEntries(request.headers), body: await request.text() });
  const handled = async () => (await mf.dispatchFetch('http://payhook.test/test/fulfilled')).json();
  const line = await deliver(send, handled);
  const flags = compatibilityFlags.length > 0 ? ', ' + compatibilityFlags.join(', ') : ', no flags';
  const runtime = 'workerd ' + require('workerd/package.json').version + ' (miniflare '
    + require('miniflare/package.json').version + flags + '): ';
  console.log(runtime + line);
  // The client runs inside the Worker: its fetch goes from workerd to the fake.
  const client = await mf.dispatchFetch('http://payhook.test/test/client', { method: 'POST',
    body: JSON.stringify({ api, prefix }) });
  const tail = await client.text();
  if (client.status !== 200) throw new Error('the client in workerd failed: ' + tail);
  console.log(runtime + 'client ' + tail);
} finally {
  await mf.dispose();
}
`;

/** The relay's line: what a delivery through `createRelay` in workerd must come to. */
const RELAY_EXPECTED =
  'relay journaled #1, long-poll woken with #1, SSE #1, sha256 equal, header verified, another token 403';

/**
 * `createRelay` as a Worker: the in-memory journal (one isolate's memory: what a miniflare run shows; a deployed
 * Worker needs a journal it reaches over the network, docs/relay.md), built at the first request, since a Worker's
 * global scope may not start timers or generate random values.
 */
const RELAY_WORKER = `import { createRelay, MemoryJournal } from '@payhook/relay';
let relay;
export default {
  fetch(request, env) {
    relay ??= createRelay({ journal: new MemoryJournal(), adminToken: env.ADMIN_TOKEN,
      signingSecret: env.SIGNING_SECRET, logger: false });
    return relay.fetch(request, { remoteAddress: request.headers.get('cf-connecting-ip') ?? undefined });
  },
};
`;

/**
 * Node.js drives the relay's Worker in miniflare: two channels created with the admin token, a long-poll of the
 * first held while it is empty, a delivery posted (from the service's address, as Cloudflare names it in
 * CF-Connecting-IP) and answered once journaled, the long-poll woken with it, the SSE stream from the start giving it
 * too, its bytes and SHA-256 equal to those sent, its header verified with the channel's key by core's check, and the
 * second channel's token refused 403.
 */
const RELAY_CHECK = `import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { Miniflare } from 'miniflare';
import { verifyRelayHeader } from '@payhook/relay';
const require = createRequire(import.meta.url);
const { compatibilityDate, compatibilityFlags, body } = JSON.parse(process.argv[2]);
const ADMIN = 'admin-token-for-the-runtimes-check';
const mf = new Miniflare({ modules: true, scriptPath: 'dist/relay-worker.js', compatibilityDate, compatibilityFlags,
  bindings: { ADMIN_TOKEN: ADMIN, SIGNING_SECRET: 'signing-secret-for-the-runtimes-check-0123456789' } });
const base = 'http://relay.test';
const fail = (what, value) => { throw new Error(what + ': ' + JSON.stringify(value)); };
try {
  const create = async (name) => {
    const response = await mf.dispatchFetch(base + '/channels', { method: 'POST', headers: {
      authorization: 'Bearer ' + ADMIN, 'content-type': 'application/json' }, body: JSON.stringify({ name }) });
    if (response.status !== 201) fail('channel ' + name, [response.status, await response.text()]);
    return response.json();
  };
  const alice = await create('alice');
  const bob = await create('bob');
  const auth = (token) => ({ authorization: 'Bearer ' + token });
  // Held while the channel is empty: the delivery below wakes it.
  const polled = mf.dispatchFetch(base + '/out/alice/events?after=0&wait=20', { headers: auth(alice.token) });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const posted = await mf.dispatchFetch(base + '/in/alice', { method: 'POST', body, headers: {
    'content-type': 'application/x-www-form-urlencoded', 'cf-connecting-ip': '35.187.74.148' } });
  const answer = await posted.json();
  if (posted.status !== 200 || answer.sequence !== 1) fail('the delivery', [posted.status, answer]);
  const poll = await (await polled).json();
  const event = poll.events?.[0];
  if (poll.events?.length !== 1 || event.sequence !== 1) fail('the long-poll', poll);
  const stream = await mf.dispatchFetch(base + '/out/alice', { headers: { ...auth(alice.token),
    accept: 'text/event-stream', 'last-event-id': '0' } });
  const reader = stream.body.getReader();
  let text = '';
  while (!/event: delivery\\ndata: .+\\n/.test(text)) {
    const { value, done } = await reader.read();
    if (done) fail('the SSE stream ended', text);
    text += new TextDecoder().decode(value);
  }
  await reader.cancel();
  const sse = JSON.parse(/event: delivery\\ndata: (.+)\\n/.exec(text)[1]);
  if (sse.sequence !== 1) fail('the SSE delivery', sse);
  const bytes = Buffer.from(event.body, 'base64url');
  const sha256 = createHash('sha256').update(body).digest('base64url');
  if (bytes.toString() !== body || event.sha256 !== sha256 || sse.sha256 !== sha256)
    fail('the bytes', { sent: sha256, polled: event.sha256, streamed: sse.sha256 });
  const forward = await verifyRelayHeader(event.header, bytes, alice.key);
  if (forward.sender !== '35.187.74.148' || forward.sequence !== 1) fail('the header', forward);
  const other = await mf.dispatchFetch(base + '/out/alice/events?after=0', { headers: auth(bob.token) });
  if (other.status !== 403) fail("another channel's token", other.status);
  const flags = compatibilityFlags.length > 0 ? ', ' + compatibilityFlags.join(', ') : ', no flags';
  console.log('workerd ' + require('workerd/package.json').version + ' (miniflare '
    + require('miniflare/package.json').version + flags + '): relay journaled #' + answer.sequence
    + ', long-poll woken with #' + event.sequence + ', SSE #' + sse.sequence
    + ', sha256 equal, header verified, another token ' + other.status);
} finally {
  await mf.dispose();
}
`;

interface WorkersRecipe {
  worker: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
}

/** The `src/worker.ts` and `wrangler.toml` of docs/recipes.md's Cloudflare Workers section. */
export function workersRecipe(markdown: string): WorkersRecipe {
  const section = /^## Cloudflare Workers\n([\s\S]*?)(?=^## )/m.exec(markdown)?.[1];
  if (!section) throw new Error('docs/recipes.md has no "## Cloudflare Workers" section');
  const block = (lang: string) => {
    const code = new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(section)?.[1];
    if (!code) throw new Error(`the Cloudflare Workers recipe has no \`\`\`${lang} block`);
    return code;
  };
  const toml = block('toml');
  const date = /^compatibility_date = "([^"]+)"$/m.exec(toml)?.[1];
  if (!date) throw new Error(`wrangler.toml lacks compatibility_date:\n${toml}`);
  const flags = /^compatibility_flags = (\[.*\])$/m.exec(toml)?.[1];
  return {
    worker: block('ts'),
    compatibilityDate: date,
    compatibilityFlags: flags ? (JSON.parse(flags) as string[]) : [],
  };
}

/** What wrangler's bundler does for a Worker: esbuild, the workerd conditions, node: built-ins left to nodejs_compat. */
const WORKER_BUNDLE = [
  '--bundle',
  '--format=esm',
  '--platform=neutral',
  '--main-fields=module,main',
  '--conditions=workerd,worker,browser',
  '--external:node:*',
  '--log-level=warning',
];

/** A signed delivery's form body, as the service posts it. */
function signedDelivery(orderId: string): string {
  const notification = {
    payment_id: `p-${orderId}`,
    order_id: orderId,
    pos_id: 'pos-1',
    mode: 'direct',
    method: 'purchase',
    amount: 10,
    currency: 'XTS',
    status: 'success',
    status_code: '1000',
    created_at: '2026-01-01T00:00:00',
  };
  return signedForm(notification, SECRET);
}

/** `sh` without blocking this process: the fake payment service answers in it while the runtime runs. */
function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, encoding: 'utf8', maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error)
        reject(new Error(`${command} ${args.join(' ')} failed (${error.code}):\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { keep: { type: 'boolean' } } });
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'payhook-runtimes-'));
  const lap = (what: string) =>
    console.log(`runtimes: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  // Imported here: test/recipes.test.ts imports this file for workersRecipe.
  const { startFakeServer } = await import('../packages/testing/src/fake.ts');
  const server = await startFakeServer({ secret: SECRET, seed: 1 });
  const { posId, apiKey, endpointsKey, apiSecret } = server.fake.project;
  const api = { baseUrl: server.url, posId, apiKey, endpointsKey, apiSecret };
  try {
    const tarballs = packPackages(join(work, 'tarballs'), [
      '@payhook/core',
      '@payhook/payments',
      '@payhook/relay',
    ]);
    const app = join(work, 'consumer');
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'payhook-runtimes', private: true, type: 'module' }, null, 2),
    );
    writeFileSync(join(app, '.npmrc'), 'fund=false\naudit=false\nupdate-notifier=false\n');
    // The runtimes' postinstall scripts take their binaries from optional dependencies (npm packages).
    sh(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        ...tarballs.values(),
        'bun@^1',
        'deno@^2',
        'miniflare@^4',
        'esbuild@^0',
      ],
      app,
    );
    const installed = (name: string) =>
      JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8')).version as string;
    lap(
      `installed @payhook/core with bun ${installed('bun')}, deno ${installed('deno')}, miniflare ${installed('miniflare')} (workerd ${installed('workerd')}) and esbuild ${installed('esbuild')}`,
    );

    writeFileSync(join(app, 'deliveries.mjs'), DELIVERIES);
    writeFileSync(join(app, 'fetch-check.mjs'), FETCH_CHECK);
    writeFileSync(join(app, 'client.mjs'), CLIENT);
    writeFileSync(join(app, 'client-check.mjs'), CLIENT_CHECK);
    const bin = (name: string) => join(app, 'node_modules', '.bin', name);
    const results: string[] = [];
    /** The last lines printed, one per tail expected, each `<runtime> <version>[ (…)]: <tail>`. */
    const expect = (runtime: string, out: string, tails: string[]) => {
      const lines = out.trim().split('\n').slice(-tails.length);
      tails.forEach((tail, i) => {
        const line = lines[i] ?? '';
        if (!new RegExp(`^${runtime} \\S+( \\([^)]*\\))?: ${tail}$`).test(line)) {
          throw new Error(`${runtime} printed ${JSON.stringify(out)}`);
        }
        results.push(line);
        lap(line);
      });
    };
    const client = (prefix: string) => JSON.stringify({ api, prefix });
    expect('bun', await run(bin('bun'), ['fetch-check.mjs'], app), [EXPECTED]);
    expect('bun', await run(bin('bun'), ['client-check.mjs', client('bun')], app), [
      `client ${CLIENT_EXPECTED}`,
    ]);
    // No permissions: the handler needs none; the client only the fake's address.
    expect('deno', await run(bin('deno'), ['run', '--no-prompt', 'fetch-check.mjs'], app), [EXPECTED]);
    const net = `--allow-net=127.0.0.1:${server.port}`;
    const denoClient = ['run', '--no-prompt', net, 'client-check.mjs', client('deno')];
    expect('deno', await run(bin('deno'), denoClient, app), [`client ${CLIENT_EXPECTED}`]);

    const recipe = workersRecipe(readFileSync(join(ROOT, 'docs', 'recipes.md'), 'utf8'));
    writeFileSync(join(app, 'src', 'worker.ts'), recipe.worker);
    writeFileSync(join(app, 'src', 'app.js'), WORKER_APP);
    writeFileSync(join(app, 'src', 'entry.js'), WORKER_ENTRY);
    writeFileSync(join(app, 'workerd-check.mjs'), WORKERD_CHECK);
    sh(bin('esbuild'), [...WORKER_BUNDLE, 'src/entry.js', '--outfile=dist/worker.js'], app);
    if (recipe.compatibilityFlags.includes('nodejs_compat')) {
      throw new Error(
        'the Cloudflare Workers recipe sets nodejs_compat: core needs no flag, so the recipe does not',
      );
    }
    for (const flags of [recipe.compatibilityFlags, [...recipe.compatibilityFlags, 'nodejs_compat']]) {
      const settings = JSON.stringify({
        compatibilityDate: recipe.compatibilityDate,
        compatibilityFlags: flags,
        api,
        prefix: `workerd-${flags.length}`,
      });
      const out = await run(process.execPath, ['workerd-check.mjs', settings], app);
      expect('workerd', out, [EXPECTED, `client ${CLIENT_EXPECTED}`]);
    }

    writeFileSync(join(app, 'src', 'relay-worker.js'), RELAY_WORKER);
    writeFileSync(join(app, 'relay-check.mjs'), RELAY_CHECK);
    sh(bin('esbuild'), [...WORKER_BUNDLE, 'src/relay-worker.js', '--outfile=dist/relay-worker.js'], app);
    const body = signedDelivery('relay-1');
    for (const flags of [recipe.compatibilityFlags, [...recipe.compatibilityFlags, 'nodejs_compat']]) {
      const settings = JSON.stringify({
        compatibilityDate: recipe.compatibilityDate,
        compatibilityFlags: flags,
        body,
      });
      expect('workerd', await run(process.execPath, ['relay-check.mjs', settings], app), [RELAY_EXPECTED]);
    }

    const passed = [...new Set(results.map((line) => line.split(':')[0]))];
    console.log(`runtimes: passed on ${passed.join(', ')}`);
  } finally {
    await server.close();
    if (values.keep) console.log(`runtimes: kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

runMain(import.meta.url, 'runtimes', main);
