/**
 * `pnpm release:rehearsal [--nodes 20,22,24] [--keep]`: the whole release against a real registry, touching
 * nothing outside a temp dir. In a throwaway clone of the committed HEAD (its `origin` removed, so nothing can be
 * pushed back), with a private Verdaccio on 127.0.0.1 (no uplinks, storage in the temp dir) as the only registry
 * the release can reach and the only credentials it holds:
 *
 * 1. versions the pending changesets (`pnpm version-packages`), commits, and runs `pnpm release` (build, then
 *    `changeset publish`): every package is published;
 * 2. adds a core-only patch changeset, versions it and prints the newest section of each package's CHANGELOG.md
 *    (the fixed group bumps all six together), commits, and publishes again: the registry now holds two releases;
 * 3. in fresh projects on each Node version, installs the packages from Verdaccio with npm (with supertest) and
 *    with pnpm (without it), and runs a signed delivery through core, Express, Koa, Fastify and NestJS (traced by
 *    `@payhook/opentelemetry`), a `mockPaymentApi` payment whose webhook reaches an Express app, a dropped one
 *    recovered by `@payhook/payments`, `postWebhook` (or its "needs supertest" error), and `payhook`.
 *
 * It then checks that the working repository has the same HEAD, status and `@payhook/*` tags as before, and
 * prints the published tarballs' figures (files, unpacked size, dependencies) as RELEASING.md's table.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../packages/core/test/servers.ts';
import { listPackages, pnpmCommand, ROOT } from './check-packages.ts';
import { ESM, FRAMEWORKS, nodeBinary, sh } from './smoke.ts';

/** Verdaccio, pinned; installed once into node_modules/.cache. */
const VERDACCIO = '6.10.4';
/** This registry mirror lacks node-fetch's `cjs` dist-tag (verdaccio-audit asks for it): pinned to what it names. */
const VERDACCIO_OVERRIDES = { 'node-fetch@cjs': '2.7.0' };
const PAYMENT_CHECK = `
const SHOP_SECRET = 'rehearsal-secret';
const { mockPaymentApi } = await import('@payhook/testing/nock');
const testing = packages.testing;
const paid = [];
const shop = expressLib();
shop.post('/webhooks', adapter.webhookMiddleware({ secret: SHOP_SECRET, logger: false })
  .on('purchase.success', (p) => { paid.push(p.order_id); }));
const shopServer = http.createServer(shop);
await new Promise((resolve) => shopServer.listen(0, '127.0.0.1', resolve));
const shopUrl = 'http://127.0.0.1:' + shopServer.address().port;
const api = mockPaymentApi({ baseUrl: 'https://api.payments.test', secret: SHOP_SECRET });
const pay = (orderId) => fetch('https://api.payments.test/api/v1/payment', { method: 'POST', headers: api.headers(),
  body: JSON.stringify({ pos_id: api.project.posId, mode: 'direct', method: 'purchase', amount: 12.5, currency: 'XTS',
    description: 'Green tea', order_id: orderId, cc_number: packages.testingFake.TEST_CARDS.success, exp_month: 12,
    exp_year: 2030, card_cvv: '737', customer_ip: '203.0.113.7', server_url: shopUrl + '/webhooks',
    result_url: shopUrl + '/thanks' }) });
try {
  const created = await pay('rehearsal-1');
  const record = await created.json();
  assert(created.status === 200 && record.status === 'success', 'mockPaymentApi takes a payment: ' + created.status + ' ' + JSON.stringify(record));
  await api.fake.idle();
  assert(paid.length === 1 && paid[0] === 'rehearsal-1', 'the fake delivered the signed success webhook to Express: ' + JSON.stringify(paid));
  // A webhook lost on the way, recovered by @payhook/payments through the re-send API (HMAC request signature).
  api.fake.setDeliveryFaults({ drop: true });
  assert((await pay('rehearsal-2')).status === 200, 'mockPaymentApi takes a second payment');
  api.fake.setDeliveryFaults({});
  const reconciler = packages.payments.createReconciler({ listPending: () => [{ orderId: 'rehearsal-2' }],
    api: { baseUrl: 'https://api.payments.test', posId: api.project.posId, apiKey: api.project.apiKey,
      endpointsKey: api.project.endpointsKey, apiSecret: SHOP_SECRET } });
  const report = await reconciler.run();
  await api.fake.idle();
  assert(report.counts.requested === 1 && paid.join() === 'rehearsal-1,rehearsal-2', 'reconcile recovers a dropped webhook: ' + JSON.stringify(report.counts) + ' ' + JSON.stringify(paid));
  api.done();
} finally {
  api.restore();
  shopServer.closeAllConnections?.();
  await new Promise((resolve) => shopServer.close(resolve));
}
const posted = expressLib();
posted.post('/webhooks', adapter.webhookMiddleware({ secret: SHOP_SECRET, logger: false }).onAny(() => {}));
let supertest = 'supertest';
try { await import('supertest'); } catch { supertest = 'none'; }
if (supertest === 'none') {
  const refused = await testing.postWebhook(posted, testing.fakePurchase(), { secret: SHOP_SECRET }).then(() => '', (e) => e.message);
  assert(refused.includes('postWebhook needs supertest'), 'postWebhook without supertest names it: ' + refused);
} else {
  (await testing.postWebhook(posted, testing.fakePurchase(), { secret: SHOP_SECRET })).expectHandled();
}
console.log('payment ok, postWebhook with ' + supertest);
`;

interface Registry {
  url: string;
  token: string;
  /** What Verdaccio printed (warnings and errors). */
  log: string[];
  stop(): void;
}

/**
 * A request on a fresh connection: this process blocks in spawnSync between requests, so a kept-alive socket
 * may have been closed by Verdaccio without this process noticing.
 */
function request(url: string, method = 'GET', body?: object): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method, agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The environment minus what a surrounding `pnpm run` or CI adds that could steer npm or carry credentials. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|pnpm_)/i.test(key) || /TOKEN/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

function verdaccioBin(): string {
  const dir = join(ROOT, 'node_modules', '.cache', 'payhook-rehearsal', `verdaccio-${VERDACCIO}`);
  const bin = join(dir, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ private: true, dependencies: { verdaccio: VERDACCIO }, overrides: VERDACCIO_OVERRIDES }),
  );
  sh(
    'npm',
    ['install', '--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false'],
    dir,
    cleanEnv(),
  );
  return bin;
}

async function startVerdaccio(work: string, node24: string): Promise<Registry> {
  const bin = verdaccioBin();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const config = join(work, 'verdaccio.yaml');
  // No uplinks: @payhook/* can only come from what this rehearsal publishes; consumers get the rest from npm.
  writeFileSync(
    config,
    [
      `storage: ${join(work, 'verdaccio-storage')}`,
      'auth:',
      `  htpasswd: { file: ${join(work, 'htpasswd')}, max_users: 1 }`,
      'uplinks: {}',
      'packages:',
      "  '**': { access: $all, publish: $authenticated }",
      'log: { type: stdout, format: pretty, level: warn }',
      `listen: 127.0.0.1:${port}`,
      '',
    ].join('\n'),
  );
  const log: string[] = [];
  const child: ChildProcess = spawn(node24, [bin, '--config', config], {
    cwd: work,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.once('exit', stop);
  for (let attempt = 0; ; attempt++) {
    try {
      if ((await request(`${url}-/ping`)).status === 200) break;
    } catch {}
    if (child.exitCode !== null || attempt === 100) {
      stop();
      throw new Error(`Verdaccio did not start on ${url}:\n${log.join('')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const user = await request(`${url}-/user/org.couchdb.user:rehearsal`, 'PUT', {
    name: 'rehearsal',
    password: 'rehearsal-only',
  });
  const { token } = JSON.parse(user.body.toString()) as { token?: string };
  if (user.status !== 201 || !token) throw new Error(`Verdaccio refused the rehearsal user: ${user.status}`);
  return { url, token, log, stop };
}

/** What could show that the rehearsal touched the working repository. */
function repositoryState(): string {
  const git = (...args: string[]) => sh('git', args, ROOT);
  return [git('rev-parse', 'HEAD'), git('status', '--porcelain'), git('tag', '--list', '@payhook/*')].join(
    '\n',
  );
}

function newestSection(changelog: string): string {
  const sections = changelog.split(/^(?=## )/m);
  return (sections[1] ?? '(no release section)').trim();
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { nodes: { type: 'string', default: '20,22,24' }, keep: { type: 'boolean' } },
  });
  const majors = values.nodes.split(',').map((v) => v.trim());
  const started = Date.now();
  const lap = (what: string) =>
    console.log(`rehearsal: ${what} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  const before = repositoryState();
  if (sh('git', ['status', '--porcelain'], ROOT).trim() !== '') {
    console.log(
      'rehearsal: the working tree has uncommitted changes; the rehearsal releases the committed HEAD',
    );
  }
  const work = mkdtempSync(join(tmpdir(), 'payhook-rehearsal-'));
  const [pnpm, prefix] = pnpmCommand();
  let registry: Registry | undefined;
  try {
    const clone = join(work, 'clone');
    sh('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], work);
    sh(
      'git',
      ['checkout', '--quiet', '-B', 'rehearsal', sh('git', ['rev-parse', 'HEAD'], ROOT).trim()],
      clone,
    );
    sh('git', ['remote', 'remove', 'origin'], clone);
    const commit = (message: string) => {
      sh('git', ['add', '-A'], clone);
      sh(
        'git',
        ['-c', 'user.name=rehearsal', '-c', 'user.email=rehearsal@localhost', 'commit', '-qm', message],
        clone,
      );
    };
    sh(pnpm, [...prefix, 'install', '--prefer-offline', '--frozen-lockfile'], clone, cleanEnv());
    lap(`cloned HEAD into ${clone} and installed`);

    const node24 = nodeBinary('24', work);
    registry = await startVerdaccio(work, node24);
    lap(`Verdaccio ${VERDACCIO} listens on ${registry.url} (storage in ${work})`);
    // The release sees only Verdaccio, with its token in a user config of its own: nothing else to publish to.
    const host = registry.url.replace(/^http:/, '');
    const npmrc = join(work, 'publish.npmrc');
    writeFileSync(npmrc, `registry=${registry.url}\n${host}:_authToken=${registry.token}\n`);
    writeFileSync(join(clone, '.npmrc'), `registry=${registry.url}\n`);
    const publishEnv = cleanEnv({ npm_config_userconfig: npmrc, npm_config_registry: registry.url });
    const release = () => sh(pnpm, [...prefix, 'run', 'release'], clone, publishEnv);

    const pending = readdirSync(join(clone, '.changeset')).filter(
      (f) => f.endsWith('.md') && f !== 'README.md',
    );
    if (pending.length > 0) {
      sh(pnpm, [...prefix, 'run', 'version-packages'], clone, cleanEnv());
      commit('Version packages');
    }
    release();
    const first = listVersions(clone);
    lap(`pnpm release published ${describe(first)} (${pending.length} changesets versioned first)`);

    writeFileSync(
      join(clone, '.changeset', 'rehearsal-core-patch.md'),
      "---\n'@payhook/core': patch\n---\n\nRehearsal: a core-only patch.\n",
    );
    sh(pnpm, [...prefix, 'run', 'version-packages'], clone, cleanEnv());
    const second = listVersions(clone);
    console.log('\nrehearsal: after a core-only patch changeset, `pnpm version-packages` wrote:');
    for (const pkg of listPackages()) {
      const dir = join(clone, relative(ROOT, pkg.dir));
      const changelog = readFileSync(join(dir, 'CHANGELOG.md'), 'utf8');
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const deps = Object.entries(manifest.dependencies ?? {}).map(([n, r]) => `${n} ${r}`);
      console.log(`\n--- ${pkg.name} ${manifest.version} (dependencies: ${deps.join(', ') || 'none'})`);
      console.log(newestSection(changelog));
      if (manifest.version === first.get(pkg.name)) {
        throw new Error(`${pkg.name} stayed at ${manifest.version} after a core patch`);
      }
    }
    console.log('');
    commit('Version packages (core patch)');
    release();
    const tags = sh('git', ['tag', '--list'], clone).trim().split('\n');
    lap(`pnpm release published ${describe(second)}; the clone holds ${tags.length} tags: ${tags.join(' ')}`);

    const table: string[] = [];
    for (const [name, version] of second) {
      const { body } = await request(`${registry.url}${name.replace('/', '%2f')}`);
      const doc = JSON.parse(body.toString()) as {
        'dist-tags': { latest: string };
        versions: Record<string, { dist: { tarball: string }; dependencies?: object }>;
      };
      const published = Object.keys(doc.versions);
      if (doc['dist-tags'].latest !== version || !published.includes(first.get(name)!)) {
        throw new Error(
          `${name}: the registry holds ${published.join(', ')} (latest ${doc['dist-tags'].latest})`,
        );
      }
      const { dist, dependencies } = doc.versions[version]!;
      const tarball = join(work, `${name.replace('/', '-')}-${version}.tgz`);
      writeFileSync(tarball, (await request(dist.tarball)).body);
      // `tar -tvzf` lines: mode owner size date time path.
      const files = sh('tar', ['-tvzf', tarball], work)
        .trim()
        .split('\n')
        .filter((line) => !line.startsWith('d'));
      if (!files.some((line) => line.endsWith(' package/LICENSE')))
        throw new Error(`${name} ships no LICENSE`);
      const unpacked = files.reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[2]), 0);
      const deps = Object.entries(dependencies ?? {}).map(([n, r]) => `\`${n}\` ${r}`);
      table.push(
        `| \`${name}\` | ${files.length} | ${(unpacked / 1024).toFixed(1)} KB | ${(statSync(tarball).size / 1024).toFixed(1)} KB | ${deps.join(', ') || 'none'} |`,
      );
    }

    const wanted = [...second].map(([name, version]) => `${name}@${version}`);
    const check = `${ESM}\n${PAYMENT_CHECK}`;
    for (const major of majors) {
      const node = major === '24' ? node24 : nodeBinary(major, work);
      const env = cleanEnv({ PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` });
      for (const manager of ['npm', 'pnpm'] as const) {
        const app = join(work, `consumer-node${major}-${manager}`);
        mkdirSync(app);
        writeFileSync(
          join(app, 'package.json'),
          JSON.stringify({ name: 'payhook-consumer', private: true, type: 'module' }),
        );
        writeFileSync(join(app, '.npmrc'), `@payhook:registry=${registry.url}\nfund=false\naudit=false\n`);
        writeFileSync(join(app, 'check.mjs'), check);
        // npm's latest nock (15) needs Node 22; Node 20 keeps nock 14. Both must install beside @payhook/testing.
        const nock = major === '20' ? 'nock@^14' : 'nock@latest';
        const others = [...FRAMEWORKS, nock];
        if (manager === 'npm')
          sh('npm', ['install', '--prefer-offline', ...wanted, ...others, 'supertest@^7'], app, env);
        else sh('npx', ['-y', 'pnpm@10', 'add', '--prefer-offline', ...wanted, ...others], app, env);
        const out = sh(node, ['check.mjs'], app, env).trim().split('\n');
        const expected = [
          `ok v${major}`,
          `payment ok, postWebhook with ${manager === 'npm' ? 'supertest' : 'none'}`,
        ];
        if (!out[0]?.startsWith(`${expected[0]}.`) || !out[0].endsWith(' esm') || out[1] !== expected[1]) {
          throw new Error(`Node ${major} with ${manager} printed ${JSON.stringify(out)}`);
        }
        const help = sh(join(app, 'node_modules', '.bin', 'payhook'), ['--help'], app, env);
        if (!help.startsWith('Usage: payhook'))
          throw new Error(`payhook --help printed ${JSON.stringify(help)}`);
        lap(
          `Node ${out[0].split(' ')[1]}, ${manager}: installed ${wanted.length} packages from Verdaccio; a signed delivery through core, Express, Koa, Fastify and NestJS traced by @payhook/opentelemetry, @payhook/queue loaded, a mockPaymentApi payment on ${nock}, postWebhook and payhook --help passed`,
        );
      }
    }

    console.log(
      `\nrehearsal: the published tarballs\n\n| package | files | unpacked | tarball | dependencies |\n|---|---|---|---|---|\n${table.join('\n')}\n`,
    );
  } catch (error) {
    if (registry) console.error(`rehearsal: Verdaccio printed:\n${registry.log.join('')}`);
    throw error;
  } finally {
    registry?.stop();
    if (values.keep) console.log(`rehearsal: kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
  const after = repositoryState();
  if (after !== before)
    throw new Error(`the working repository changed:\nbefore:\n${before}\nafter:\n${after}`);
  lap(`passed on Node ${majors.join(', ')}; the working repository has the same HEAD, status and tags`);
}

function listVersions(clone: string): Map<string, string> {
  const versions = new Map<string, string>();
  for (const pkg of listPackages()) {
    const dir = join(clone, relative(ROOT, pkg.dir));
    versions.set(pkg.name, JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version);
  }
  return versions;
}

function describe(versions: Map<string, string>): string {
  return [...versions].map(([name, version]) => `${name}@${version}`).join(', ');
}

main().catch((error: unknown) => {
  const cause = error instanceof Error && error.cause ? `\n${String(error.cause)}` : '';
  console.error(`rehearsal: FAILED\n${error instanceof Error ? error.message : String(error)}${cause}`);
  process.exit(1);
});
