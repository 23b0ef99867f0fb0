import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purchase } from '../examples/shared/src/deliveries.ts';
import { encodeBase64Url } from '../packages/core/src/runtime/bytes.ts';
import { encodeForm, envelope, signedData, signedForm } from './support/signed-form.ts';

// The run happens in a child process on the built packages, so everything it prints is caught: console, direct
// writes to stdout and stderr, Express's default error handler, Node's own warnings.
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const CORE = join(ROOT, 'packages', 'core', 'dist', 'index.js');
const ADAPTER = join(ROOT, 'packages', 'express', 'dist', 'index.js');
const EXPRESS = createRequire(join(ROOT, 'packages', 'express', 'package.json')).resolve('express');

const SECRET = `live-${randomBytes(18).toString('base64url')}`;
const OLD_SECRET = `old-${randomBytes(18).toString('base64url')}`;
const RELAY_KEY = `relay-${randomBytes(18).toString('base64url')}`;
const CARD_TOKEN = `tok_${randomBytes(12).toString('hex')}`;

const notification = (fields: Record<string, unknown> = {}) =>
  purchase({
    payment_id: `pay-${randomUUID()}`,
    cc_token: CARD_TOKEN,
    cc_mask: '444455******1111',
    ...fields,
  });
const signedText = (text: string, secret = SECRET) => signedData(encodeBase64Url(text), secret);

// Every body is built here, by the repository's one form helper, and handed to the child in its environment.
const BODIES: Record<string, string> = {
  valid: signedForm(notification(), SECRET),
  large: signedForm(notification({ description: 'x'.repeat(5000) }), SECRET),
  truncatedJson: `{"data": ${JSON.stringify(envelope(notification(), SECRET).data)}`,
  unsigned: encodeForm({ data: envelope(notification(), SECRET).data }),
  repeatedData: `${signedForm(notification(), SECRET)}&data=${envelope(notification(), SECRET).data}`,
  tampered: encodeForm({
    data: envelope(notification({ amount: 0.01 }), SECRET).data,
    signature: envelope(notification(), SECRET).signature,
  }),
  wrongSecret: signedForm(notification(), 'not-the-secret'),
  notBase64: signedData('%%%not*base64', SECRET),
  cardTokenText: signedText(`card ${CARD_TOKEN} is not JSON`),
  cardTokenTextAlone: signedText(`${CARD_TOKEN} is not JSON`),
  cardTokenString: signedText(`"${CARD_TOKEN}"`),
  cardTokenOnly: signedForm({ cc_token: CARD_TOKEN, status: 'success' }, SECRET),
  cardTokenJson: `{"data":"${CARD_TOKEN}", "signature": nope}`,
  boom: signedForm(notification({ order_id: 'boom' }), SECRET),
  oldSecret: signedForm(notification(), OLD_SECRET),
  spacedSecret: signedForm(notification(), `${SECRET}\n`),
};

const RUN = `
import http from 'node:http';
import { PassThrough } from 'node:stream';
const core = await import(${JSON.stringify(pathToFileURL(CORE).href)});
const { webhookMiddleware } = await import(${JSON.stringify(pathToFileURL(ADAPTER).href)});
const express = (await import(${JSON.stringify(pathToFileURL(EXPRESS).href)})).default;
const { SECRET, OLD_SECRET, RELAY_KEY } = process.env;
const { createHash, createHmac } = await import('node:crypto');
// The relay's header over a body, as @payhook/relay signs it (core's relay option reads it).
const relayed = (body, key = RELAY_KEY, at = Date.now()) => {
  const sha = createHash('sha256').update(body).digest('base64url');
  const text = ['payhook-relay/v1', 'alice', 1, at, '10.9.8.7', sha].join('\\n');
  const sig = createHmac('sha256', key).update(text).digest('base64url');
  return { ...FORM, 'x-payhook-relay': 'v=1;channel=alice;seq=1;at=' + at + ';sender=10.9.8.7;sha256=' + sha + ';sig=' + sig };
};

const BODY = JSON.parse(process.env.BODIES);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const codes = [];
const post = (body, headers = FORM) => ({ method: 'POST', headers, body, remoteAddress: '127.0.0.1' });

const stuck = { name: 'stuck', claim: () => ({ status: 'in_flight' }), renew: () => true, commit() {}, release() {} };
const broken = { name: 'broken', claim: () => { throw new Error('connection refused'); }, renew: () => true, commit() {}, release() {} };
const app = (n) => { if (n.order_id === 'boom') throw new Error('the fulfilment service is unavailable'); };
// Another copy claimed the key: the first renewal answers false, and the second handler is never started.
const taken = { name: 'taken', claim: () => ({ status: 'claimed', token: 't', fence: 1 }), renew: () => false, commit: () => false, release() {} };
const main = core.createWebhookHandler({ secret: [SECRET, { id: 'old', secret: OLD_SECRET }], maxBodyBytes: 4096, readTimeoutMs: 50, handle: app });
const handlers = {
  main,
  sender: core.createWebhookHandler({ secret: SECRET, allowedSenders: ['10.9.8.7'], handle: app }),
  relayed: core.createWebhookHandler({ secret: SECRET, relay: { key: RELAY_KEY, maxAgeMs: 60_000 }, handle: app }),
  resolver: core.createWebhookHandler({ secret: () => undefined, handle: app }),
  vault: core.createWebhookHandler({ secret: () => { throw new Error('vault unreachable'); }, handle: app }),
  stuck: core.createWebhookHandler({ secret: SECRET, store: stuck, inFlightWaitMs: 20, handle: app }),
  broken: core.createWebhookHandler({ secret: SECRET, store: broken, handle: app }),
  queueDown: core.createWebhookHandler({ secret: SECRET, queue: { enqueue: async () => { throw new Error('the queue is unreachable'); } }, handle: app }),
  spaced: core.createWebhookHandler({ secret: SECRET + '\\n', handle: app }),
  hanging: core.createWebhookHandler({ secret: SECRET, handlerTimeoutMs: 30, handle: () => new Promise(() => {}) }),
  taken: core.createWebhookHandler({ secret: SECRET, store: taken, leaseMs: 30, handle: (_n, _c, d) => new Promise((r) => d.signal.addEventListener('abort', r)) }).onAny(app),
};
const consumed = new PassThrough(); consumed.end(); consumed.resume(); await new Promise((r) => consumed.on('end', r));
const never = { async *[Symbol.asyncIterator]() { await new Promise(() => {}); } };

const calls = [
  ['main', { ...post(BODY.valid), method: 'GET' }],
  ['sender', post(BODY.valid)],
  ['relayed', post(BODY.valid, { ...FORM, 'x-payhook-relay': 'v=2' })],
  ['relayed', post(BODY.valid, relayed(BODY.valid, 'another-key'))],
  ['relayed', post(BODY.valid, relayed(BODY.large))],
  ['relayed', post(BODY.valid, relayed(BODY.valid, RELAY_KEY, Date.now() - 3_600_000))],
  ['relayed', { ...post({ data: 'x', signature: 'y' }, relayed(BODY.valid)) }],
  ['main', post(BODY.valid, { 'content-type': 'text/plain' })],
  ['main', post(BODY.large)],
  ['main', { method: 'POST', headers: FORM, stream: never }],
  ['main', post(BODY.truncatedJson, { 'content-type': 'application/json' })],
  ['main', post(BODY.unsigned)],
  ['main', post(BODY.repeatedData)],
  ['main', { method: 'POST', headers: FORM, stream: consumed }],
  ['main', post(BODY.tampered)],
  ['main', post(BODY.wrongSecret)],
  ['resolver', post(BODY.valid)],
  ['vault', post(BODY.valid)],
  ['main', post(BODY.notBase64)],
  ['main', post(BODY.cardTokenText)],
  ['main', post(BODY.cardTokenString)],
  ['main', post(BODY.cardTokenOnly)],
  ['stuck', post(BODY.valid)],
  ['broken', post(BODY.valid)],
  ['queueDown', post(BODY.valid)],
  ['main', post(BODY.boom)],
  ['hanging', post(BODY.valid)],
  ['taken', post(BODY.valid)],
  ['main', post(BODY.oldSecret)],
  ['spaced', post(BODY.spacedSecret)],
];
for (const [name, request] of calls) {
  const result = await handlers[name](request, undefined);
  codes.push(result.error ? result.error.code : result.outcome);
}

// The same refusals through Express: answered by payhook, and forwarded to Express's default error handler,
// which prints err.stack to stderr outside NODE_ENV=test.
for (const forwardErrors of [false, true]) {
  const server = http.createServer(express().post('/hook', webhookMiddleware({ secret: SECRET, forwardErrors, handle: app })));
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = 'http://127.0.0.1:' + server.address().port + '/hook';
  const bodies = [
    [FORM, BODY.wrongSecret],
    [FORM, BODY.boom],
    [FORM, BODY.cardTokenOnly],
    [FORM, BODY.cardTokenTextAlone],
    [{ 'content-type': 'application/json' }, BODY.cardTokenJson],
  ];
  for (const [headers, body] of bodies) {
    const response = await fetch(url, { method: 'POST', headers, body });
    codes.push('express:' + response.status);
  }
  server.close();
}
process.stdout.write('RESULT ' + JSON.stringify(codes) + '\\n');
`;

let work: string;
let output = '';
let codes: string[] = [];
let exitStatus: number | null = null;

beforeAll(() => {
  for (const file of [CORE, ADAPTER]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: build the packages first (pnpm build)`);
  }
  work = mkdtempSync(join(tmpdir(), 'payhook-logs-'));
  const script = join(work, 'run.mjs');
  writeFileSync(script, RUN);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SECRET,
    OLD_SECRET,
    RELAY_KEY,
    BODIES: JSON.stringify(BODIES),
  };
  delete env.NODE_ENV;
  const result = spawnSync(process.execPath, [script], { encoding: 'utf8', env, timeout: 60_000 });
  exitStatus = result.status;
  output = `${result.stdout}\n${result.stderr}`;
  const line = result.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  codes = line ? (JSON.parse(line.slice('RESULT '.length)) as string[]) : [];
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('log output of a run with every refusal', () => {
  it('ran to the end and refused with every error code core has', async () => {
    expect(exitStatus).toBe(0);
    const { ERROR_STATUS } = await import(pathToFileURL(CORE).href);
    expect(codes).toEqual([
      'request.method_not_allowed',
      'sender.forbidden',
      'relay.header_invalid',
      'relay.signature_invalid',
      'relay.body_mismatch',
      'relay.header_stale',
      'relay.body_unavailable',
      'media_type.unsupported',
      'payload.too_large',
      'payload.timeout',
      'payload.malformed',
      'payload.field_missing',
      'payload.field_repeated',
      'body.consumed',
      'signature.invalid',
      'signature.invalid',
      'secret.not_found',
      'secret.unavailable',
      'data.encoding_invalid',
      'data.json_invalid',
      'data.not_object',
      'notification.invalid',
      'notification.in_flight',
      'store.unavailable',
      'queue.unavailable',
      'handler.failed',
      'handler.timeout',
      'claim.lost',
      'handled',
      'handled',
      'express:401',
      'express:500',
      'express:400',
      'express:400',
      'express:400',
      'express:401',
      'express:500',
      'express:400',
      'express:400',
      'express:400',
    ]);
    expect(new Set(codes)).toEqual(
      new Set([...Object.keys(ERROR_STATUS), 'handled', 'express:401', 'express:500', 'express:400']),
    );
  });

  it('captured the diagnostics that are printed (so the check below sees real logs)', () => {
    expect(output).toContain('(store.unavailable)');
    expect(output).toContain('(queue.unavailable)');
    expect(output).toContain('(secret.unavailable)');
    expect(output).toContain('(handler.failed)');
    expect(output).toContain('(handler.timeout)');
    // What the application threw, with its stack, for the merchant to fix.
    expect(output).toMatch(/Error: the fulfilment service is unavailable\n\s+at /);
    expect(output).toContain('(body.consumed)');
    expect(output).toContain('a webhook secret has leading or trailing whitespace');
    // Express's default handler printed the forwarded refusals' stacks.
    expect(output).toMatch(/SignatureError: \[@payhook\/core\] the signature does not match/);
  });

  it('never prints a secret, a card token or a payload', () => {
    const payloadMarkers = ['"cc_token"', '"payment_id"', '"order_id":"boom"', 'eyJ']; // eyJ: base64 of '{"'
    // Not even a piece: V8 quotes about ten characters of the text in a JSON.parse error, so any 8 are checked.
    for (const value of [SECRET, OLD_SECRET, RELAY_KEY, CARD_TOKEN]) {
      for (let i = 0; i + 8 <= value.length; i++) expect(output).not.toContain(value.slice(i, i + 8));
    }
    for (const marker of payloadMarkers) expect(output).not.toContain(marker);
  });
});

// The API client's operations (capture, void, refund, split capture, status) and `payhook operation`, run in
// child processes on the built packages against a service that echoes every credential it receives: each error
// printed whole (console.error prints its fields and cause), and the CLI's output.
describe('log output of the API client operations and payhook operation', () => {
  const PAYMENTS = join(ROOT, 'packages', 'payments', 'dist', 'index.js');
  const CLI = join(ROOT, 'packages', 'testing', 'dist', 'cli.js');
  const API_SECRET = `sk-${randomBytes(18).toString('base64url')}`;
  const ENDPOINTS_KEY = `ek-${randomBytes(18).toString('base64url')}`;
  const OPERATIONS_RUN = `
import http from 'node:http';
const { createApiClient } = await import(${JSON.stringify(pathToFileURL(PAYMENTS).href)});
const { API_SECRET, ENDPOINTS_KEY } = process.env;
let status = 400;
const signatures = [];
const server = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => { body += chunk; });
  request.on('end', () => {
    if (status === 0) return; // never answers: a timeout
    const auth = String(request.headers['x-api-auth']);
    signatures.push(auth.split(':')[1]);
    const echo = auth + ' X-API-KEY: ' + request.headers['x-api-key'] + ' ' + body;
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ message: 'Refused: ' + echo, args: { code: echo, violations: [{ field: echo, code: echo }] } }));
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = 'http://127.0.0.1:' + server.address().port;
const codes = [];
for (const authForm of ['hmac', 'secret']) {
  for (const answer of [400, 401, 404, 409, 422, 500, 0]) {
    status = answer;
    const client = createApiClient({ baseUrl, posId: 'pos-1', apiKey: 'ak-visible', endpointsKey: ENDPOINTS_KEY, apiSecret: API_SECRET, authForm, timeoutMs: 100 });
    const order = { orderId: 'o-1', currency: 'UAH' };
    for (const call of [
      () => client.capture({ ...order, amount: 5, orderAmount: 10 }),
      () => client.refund({ ...order, amount: 5, orderAmount: 10 }),
      () => client.refund({ ...order, amount: 5 }),
      () => client.void(order),
      () => client.splitCapture({ ...order, amount: 5, split: [{ amount: 5, sub_merchant_id: 's-1' }] }),
      () => client.getOperations('o-1'),
    ]) {
      try { await call(); codes.push('answered'); } catch (error) { codes.push(error.code); console.error(error); console.log(String(error)); }
    }
  }
}
server.closeAllConnections();
server.close();
console.log('SIGNATURES ' + JSON.stringify([...new Set(signatures)]));
console.log('RESULT ' + JSON.stringify([...new Set(codes)].sort()));
`;
  let output = '';
  let codes: string[] = [];
  let signatures: string[] = [];
  let cliOutput = '';

  beforeAll(async () => {
    for (const file of [PAYMENTS, CLI]) {
      if (!existsSync(file)) throw new Error(`${file} is missing: build the packages first (pnpm build)`);
    }
    const dir = mkdtempSync(join(tmpdir(), 'payhook-operations-logs-'));
    try {
      const script = join(dir, 'operations.mjs');
      writeFileSync(script, OPERATIONS_RUN);
      const env = { PATH: process.env.PATH ?? '', API_SECRET, ENDPOINTS_KEY };
      const result = spawnSync(process.execPath, [script], { encoding: 'utf8', env, timeout: 60_000 });
      // The harness's own SIGNATURES line (the secret itself under authForm 'secret') is not the client's output.
      const printed = result.stdout.split('\n').filter((l) => !l.startsWith('SIGNATURES '));
      output = `${printed.join('\n')}\n${result.stderr}`;
      const line = (name: string) => result.stdout.split('\n').find((l) => l.startsWith(`${name} `));
      codes = JSON.parse(line('RESULT')?.slice('RESULT '.length) ?? '[]') as string[];
      signatures = JSON.parse(line('SIGNATURES')?.slice('SIGNATURES '.length) ?? '[]') as string[];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The CLI against a service that echoes the credentials in a 401.
    const { createServer } = await import('node:http');
    const echoing = createServer((request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      const echo = `${String(request.headers['x-api-auth'])} ${String(request.headers['x-api-key'])}`;
      response.end(JSON.stringify({ message: `Invalid credentials: ${echo}`, args: { code: 'S-404' } }));
    });
    await new Promise<void>((done) => echoing.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(echoing.address() as { port: number }).port}`;
    const env = {
      PATH: process.env.PATH ?? '',
      PAYHOOK_API_KEY: 'ak-visible',
      PAYHOOK_ENDPOINTS_KEY: ENDPOINTS_KEY,
      PAYHOOK_API_SECRET: API_SECRET,
    };
    const runs = await Promise.all(
      ['hmac', 'secret'].map(
        (form) =>
          new Promise<string>((done) => {
            const args = ['operation', 'refund', '--base-url', url, '--pos-id', 'pos-1', '--order', 'o-1'];
            const more = ['--amount', '5', '--currency', 'UAH', '--order-amount', '10', '--auth-form', form];
            const child = spawn(process.execPath, [CLI, ...args, ...more], { env });
            let text = '';
            child.stdout.on('data', (chunk) => {
              text += chunk;
            });
            child.stderr.on('data', (chunk) => {
              text += chunk;
            });
            child.on('close', (code) => done(`${text}\nexit ${code}`));
          }),
      ),
    );
    echoing.close();
    cliOutput = runs.join('\n');
  }, 120_000);

  it('ran every call to a failure with its code, and the CLI to its exit 1', () => {
    expect(codes).toEqual(['api.not_found', 'api.refused', 'api.server', 'api.timeout', 'api.unauthorized']);
    expect(signatures.length).toBeGreaterThan(1);
    expect(output).toContain('ApiError');
    expect(cliOutput).toContain('payhook operation: api.unauthorized');
    expect(cliOutput.match(/exit 1/g)).toHaveLength(2);
  });

  it('never prints the API secret, the endpoints key or a request signature', () => {
    for (const text of [output, cliOutput]) {
      for (const value of [API_SECRET, ENDPOINTS_KEY, ...signatures.filter((s) => s !== undefined)]) {
        for (let i = 0; i + 8 <= value.length; i++) expect(text).not.toContain(value.slice(i, i + 8));
      }
    }
  });
});
