import { createHmac } from 'node:crypto';
import { appendFile, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { createCapture } from '@payhook/core/capture';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakePurchase } from '../fixtures/primary.js';
import { startFakeServer } from '../server.js';
import { maskDelivered } from './deliveries.js';
import { type Inspector, startInspector } from './server.js';

const SECRET = 'inspect-test-secret';
const purchase = fakePurchase({ order_id: 'o-1' }, { seed: 'inspect-server' });

function line(fields: Record<string, unknown>): string {
  return `${JSON.stringify({ v: 1, at: '2026-11-26T10:00:00.000Z', status: 200, outcome: 'handled', ...fields })}\n`;
}

describe('payhook inspect, the server', () => {
  let dir: string;
  let capture: string;
  let inspector: Inspector;
  let receiver: Server;
  let target: string;
  const handled: string[] = [];

  async function call(path: string, init: RequestInit = {}, token: string | null = inspector.token) {
    const headers = new Headers(init.headers);
    if (token !== null) headers.set('x-payhook-token', token);
    return fetch(new URL(path, inspector.url), { ...init, headers });
  }
  const post = (path: string, body: unknown) =>
    call(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'payhook-inspect-'));
    capture = join(dir, 'deliveries.jsonl');
    await writeFile(
      capture,
      line({ notification: purchase }) + line({ outcome: 'duplicate', notification: purchase }),
    );
    const webhook = createWebhookHandler<IncomingMessage>({ secret: SECRET, logger: false }).onAny((n) => {
      handled.push(n.order_id);
    });
    receiver = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
    inspector = await startInspector({ capture, secret: SECRET, fixtures: join(dir, 'fixtures'), target });
  });
  afterAll(async () => {
    await inspector?.close();
    receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('binds to loopback and refuses, 403, every request without its token, with another, or for another Host', async () => {
    expect(new URL(inspector.url).hostname).toBe('127.0.0.1');
    expect((await fetch(new URL('/', inspector.url))).status).toBe(403);
    expect((await call('/deliveries', {}, null)).status).toBe(403);
    expect((await call('/deliveries', {}, 'x'.repeat(inspector.token.length))).status).toBe(403);
    const rebound = await new Promise<number>((resolve, reject) => {
      const url = new URL('/deliveries', inspector.url);
      const headers = { host: 'attacker.example', 'x-payhook-token': inspector.token };
      request(url, { headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(rebound).toBe(403);
    expect((await fetch(inspector.url)).status).toBe(200);
  });

  it('serves the page with a nonce-only policy and no remote asset', async () => {
    const page = await fetch(inspector.url);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toMatch(
      /^default-src 'none'; script-src 'nonce-[^']+'; style-src 'nonce-[^']+'; connect-src 'self'/,
    );
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await page.text()).not.toMatch(/(src|href)="https?:/);
  });

  it('follows the capture as it grows, whole lines only, and names unreadable lines without their content', async () => {
    const first = await (await call('/deliveries')).json();
    expect(first.deliveries.map((d: { outcome: string }) => d.outcome)).toEqual(['handled', 'duplicate']);
    await appendFile(
      capture,
      `{"v":1,"torn":"card 4111\n${line({ notification: { ...purchase, extra: 1 } }).slice(0, 20)}`,
    );
    const second = await (await call('/deliveries?since=2')).json();
    expect(second).toMatchObject({
      total: 2,
      deliveries: [],
      unreadable: [{ line: 3, reason: 'not JSON (a torn or foreign line)' }],
    });
    expect(JSON.stringify(second)).not.toContain('4111');
    await appendFile(capture, `${line({ notification: { ...purchase, extra: 1 } }).slice(20)}`);
    const third = await (await call('/deliveries?since=2')).json();
    expect(third.deliveries).toEqual([expect.objectContaining({ id: 2, line: 4, order: 'o-1' })]);
    expect(third.deliveries[0]).not.toHaveProperty('notification');
    expect(third.unreadable).toHaveLength(1);
    const opened = await (await call('/delivery?id=2')).json();
    // Masked as capture masks, whatever the line held.
    expect(opened.delivery.notification).toEqual(maskDelivered({ ...purchase, extra: 1 }));
  });

  it('shows the other deliveries of the same notification with what changed', async () => {
    await appendFile(capture, line({ notification: { ...purchase, new_field: 'x' } }));
    const { deliveries } = await (await call('/deliveries?since=3')).json();
    expect(deliveries.map((d: { id: number }) => d.id)).toEqual([3]);
    const detail = await (await call('/delivery?id=3')).json();
    expect(detail.related).toEqual([
      expect.objectContaining({ id: 0, outcome: 'handled', changes: [{ path: 'new_field', before: '"x"' }] }),
      expect.objectContaining({
        id: 1,
        outcome: 'duplicate',
        changes: [{ path: 'new_field', before: '"x"' }],
      }),
      expect.objectContaining({
        id: 2,
        changes: [
          { path: 'extra', after: '1' },
          { path: 'new_field', before: '"x"' },
        ],
      }),
    ]);
  });

  it('replays a delivery re-signed with the test secret, then an edit, and refuses an edit that is no notification', async () => {
    const once = await (await post('/replay', { ids: [0, 1], url: target })).json();
    expect(once.answers.map((a: { status: number; outcome: string }) => [a.status, a.outcome])).toEqual([
      [200, 'handled'],
      [200, 'duplicate'],
    ]);
    const edited = await (
      await post('/replay', {
        ids: [0],
        url: target,
        notification: fakePurchase({ order_id: 'o-2' }, { seed: 'edited' }),
      })
    ).json();
    expect(edited.answers[0]).toMatchObject({ status: 200, outcome: 'handled' });
    expect(handled).toEqual(['o-1', 'o-2']);
    const invalid = await post('/replay', { ids: [0], url: target, notification: { order_id: 'o-3' } });
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).error).toMatch(
      /^the edited notification is not one the service could send/,
    );
    expect(handled).toEqual(['o-1', 'o-2']);
  });

  it('saves a fixture only under the folder named, refusing a name that would leave it', async () => {
    const saved = await (await post('/fixture', { id: 0, name: 'paid-order' })).json();
    expect(saved.files).toEqual(['paid-order.json', 'paid-order.jsonl', 'paid-order.test.ts']);
    expect(JSON.parse(await readFile(join(dir, 'fixtures', 'paid-order.json'), 'utf8'))).toEqual(
      maskDelivered(purchase),
    );
    expect(await readFile(join(dir, 'fixtures', 'paid-order.test.ts'), 'utf8')).toContain(
      "readFileSync(new URL('./paid-order.json'",
    );
    const again = await post('/fixture', { id: 1, name: 'paid-order' });
    expect([again.status, (await again.json()).error]).toEqual([
      400,
      'a fixture named paid-order exists already in the folder: choose another name',
    ]);
    for (const name of ['../escape', 'a/b', '', '.hidden']) {
      const refused = await post('/fixture', { id: 0, name });
      expect(refused.status).toBe(400);
    }
    expect((await readdir(join(dir, 'fixtures'))).sort()).toEqual([
      'paid-order.json',
      'paid-order.jsonl',
      'paid-order.test.ts',
    ]);
    expect(await readdir(dir)).toEqual(expect.not.arrayContaining(['escape']));
  });

  it("shows a running fake service's delivery attempts with the receiver's answers", async () => {
    const server = await startFakeServer({ secret: SECRET, seed: 7 });
    const live = await startInspector({
      fakeService: { url: server.url, endpointsKey: server.fake.project.endpointsKey },
    });
    try {
      const { posId, apiKey, endpointsKey } = server.fake.project;
      const body = JSON.stringify({
        pos_id: posId,
        mode: 'direct',
        method: 'purchase',
        amount: 10,
        currency: 'UAH',
        description: 'inspect',
        order_id: 'o-live',
        cc_number: '4242424242424242',
        exp_month: 12,
        exp_year: 2030,
        card_cvv: '123',
        server_url: target,
      });
      const hmac = createHmac('sha256', SECRET).update(body).digest('hex');
      const created = await fetch(`${server.url}/api/v1/payment`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-auth': `SVC-HMAC-SHA256 ${apiKey}:${hmac}`,
          'x-api-key': endpointsKey,
        },
        body,
      });
      expect(created.status).toBe(200);
      await server.fake.idle();
      const response = await fetch(new URL('/deliveries', live.url), {
        headers: { 'x-payhook-token': live.token },
      });
      const { deliveries, errors } = await response.json();
      expect(errors).toEqual([]);
      expect(deliveries).toEqual([
        expect.objectContaining({
          source: 'fake',
          event: 'purchase.success',
          order: 'o-live',
          status: 200,
          outcome: 'handled',
        }),
      ]);
    } finally {
      await live.close();
      await server.close();
    }
  });

  it('reads each line once when pages refresh at the same time', async () => {
    const many = join(dir, 'many.jsonl');
    await writeFile(
      many,
      Array.from({ length: 3_000 }, (_, i) =>
        line({ notification: { ...purchase, order_id: `m-${i}` } }),
      ).join(''),
    );
    const watcher = await startInspector({ capture: many });
    try {
      const read = () =>
        fetch(new URL('/deliveries?since=999999', watcher.url), {
          headers: { 'x-payhook-token': watcher.token },
        }).then((response) => response.json());
      const answers = await Promise.all([read(), read(), read()]);
      expect(answers.map((answer) => [answer.total, answer.unreadableCount])).toEqual([
        [3_000, 0],
        [3_000, 0],
        [3_000, 0],
      ]);
    } finally {
      await watcher.close();
    }
  });

  it('loses no delivery while the capture rotates again and again with no page open', async () => {
    const rotating = await mkdtemp(join(dir, 'rotating-'));
    const path = join(rotating, 'deliveries.jsonl');
    const capture = createCapture({ path, maxBytes: 2_500, logger: false });
    const watcher = await startInspector({ capture: path });
    try {
      for (let i = 0; i < 12; i++) {
        const notification = fakePurchase({ order_id: `r-${i}` }, { seed: `r-${i}` });
        capture.record({ headers: { 'content-type': 'application/x-www-form-urlencoded' } }, {
          status: 200,
          outcome: 'handled',
          headers: {},
          body: '',
          notification: { raw: notification },
        } as never);
        await capture.flush();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const read = await fetch(new URL('/deliveries', watcher.url), {
        headers: { 'x-payhook-token': watcher.token },
      }).then((response) => response.json());
      expect(read.deliveries.map((d: { order: string }) => d.order)).toEqual(
        Array.from({ length: 12 }, (_, i) => `r-${i}`),
      );
    } finally {
      await watcher.close();
    }
  });

  it.each(['/replay', '/fixture', '/curl'])(
    'refuses a POST to %s without the token (403) or that is not JSON (400): no form or other page can drive it',
    async (path) => {
      expect((await call(path, { method: 'POST', body: '{}' }, null)).status).toBe(403);
      const form = await call(path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'ids=0',
      });
      expect([form.status, (await form.json()).error]).toEqual([400, 'send application/json']);
    },
  );

  it('refuses requests that are not JSON', async () => {
    const form = await call('/replay', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    expect([form.status, (await form.json()).error]).toEqual([400, 'send application/json']);
  });
});

describe('payhook inspect, replays and fixtures that hold', () => {
  let dir: string;
  let inspector: Inspector;
  let receiver: Server;
  let target: string;
  const handled: string[] = [];
  const unparsable = { ...fakePurchase({ order_id: 'o-bad' }, { seed: 'bad' }), payment_id: undefined };

  const post = (path: string, body: unknown, on: Inspector = inspector) =>
    fetch(new URL(path, on.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-payhook-token': on.token },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'payhook-inspect-hold-'));
    const capture = join(dir, 'deliveries.jsonl');
    await writeFile(
      capture,
      line({ notification: purchase }) +
        line({ status: 401, outcome: 'refused', code: 'signature.invalid' }) +
        line({ notification: fakePurchase({ order_id: 'o-3' }, { seed: 'o-3' }) }) +
        line({ status: 400, outcome: 'refused', code: 'notification.invalid', notification: unparsable }),
    );
    const webhook = createWebhookHandler<IncomingMessage>({ secret: SECRET, logger: false }).onAny((n) => {
      handled.push(n.order_id);
    });
    receiver = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    target = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
    inspector = await startInspector({
      capture,
      secret: SECRET,
      fixtures: join(dir, 'test', 'fixtures'),
      target,
    });
  });
  afterAll(async () => {
    await inspector?.close();
    receiver?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('replays every row of a batch it can, and names the one it refused', async () => {
    const response = await post('/replay', { ids: [0, 1, 2], url: target });
    expect(response.status).toBe(200);
    const { answers } = await response.json();
    expect(
      answers.map((a: { id: number; status?: number; refused?: string }) => [a.id, a.status, a.refused]),
    ).toEqual([
      [0, 200, undefined],
      [
        1,
        undefined,
        'delivery 1 has no notification (refused before its signature was verified): nothing to send',
      ],
      [2, 200, undefined],
    ]);
    expect(handled.slice(-2)).toEqual(['o-1', 'o-3']);
  });

  it('names --resign, the option that exists, when replay is off', async () => {
    const off = await startInspector({ capture: join(dir, 'deliveries.jsonl') });
    try {
      const refused = await post('/replay', { ids: [0], url: target }, off);
      expect([refused.status, (await refused.json()).error]).toEqual([
        400,
        'start payhook inspect with --resign SECRET (the test secret) or PAYHOOK_SECRET to replay',
      ]);
    } finally {
      await off.close();
    }
  });

  it('sends an unedited delivery that does not parse as captured, never calling it edited', async () => {
    const response = await post('/replay', { ids: [3], url: target });
    const { answers } = await response.json();
    expect(answers).toEqual([expect.objectContaining({ id: 3, status: 400, code: 'notification.invalid' })]);
    expect(JSON.stringify(answers)).not.toContain('edited');
  });

  it.each([
    'http://192.0.2.1/webhooks',
    'http://example.com/webhooks',
    'https://127.0.0.1.example.com/',
    'http://[::ffff:c000:201]/',
    'file:///etc/passwd',
  ])('replays only to the app given at start or to loopback: refuses %s', async (url) => {
    const refused = await post('/replay', { ids: [0], url });
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatch(/^replay goes only to the app given with --target/);
  });

  it("shows a replay's whole answer, its status, headers and body, and the request sent", async () => {
    const big = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-app': 'yes' });
      res.end('x'.repeat(5_000));
    });
    await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://localhost:${(big.address() as AddressInfo).port}/hook`;
      const { answers } = await (await post('/replay', { ids: [0], url })).json();
      expect(answers[0]).toMatchObject({
        id: 0,
        status: 200,
        body: 'x'.repeat(5_000),
        headers: expect.objectContaining({ 'x-app': 'yes', 'content-type': 'text/plain' }),
        request: {
          method: 'POST',
          url,
          headers: expect.objectContaining({ 'content-type': 'application/x-www-form-urlencoded' }),
          body: expect.stringMatching(/^data=[\w%-]+&signature=[\w%-]+$/),
        },
      });
    } finally {
      big.close();
    }
  });

  it('writes fixtures readable by their owner only, whose test imports the app from the project root and reads its secret from the environment', async () => {
    const saved = await (await post('/fixture', { id: 0, name: 'paid' })).json();
    const folder = join(dir, 'test', 'fixtures');
    expect(saved.folder).toBe(folder);
    for (const file of saved.files) expect((await stat(join(folder, file))).mode & 0o777).toBe(0o600);
    const test = await readFile(join(folder, 'paid.test.ts'), 'utf8');
    const imported = /from '(\.[^']*app\.js)'/.exec(test)?.[1];
    expect(imported).toBeDefined();
    expect(resolve(folder, imported!)).toBe(join(process.cwd(), 'src', 'app.js'));
    expect(test).not.toContain(SECRET);
    expect(test).not.toContain("'test-secret'");
    expect(test).toContain('process.env.PAYHOOK_SECRET');
  });
});

describe('payhook inspect over a live fake service', () => {
  it('masks what capture masks: card token, customer details and the receipt link never reach the page', async () => {
    const server = await startFakeServer({ secret: SECRET, seed: 11 });
    const receiver = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true,"outcome":"handled"}');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const live = await startInspector({
      fakeService: { url: server.url, endpointsKey: server.fake.project.endpointsKey },
    });
    try {
      const { posId, apiKey, endpointsKey } = server.fake.project;
      const body = JSON.stringify({
        pos_id: posId,
        mode: 'direct',
        method: 'purchase',
        amount: 10,
        currency: 'UAH',
        description: 'inspect',
        order_id: 'o-masked',
        cc_number: '4242424242424242',
        exp_month: 12,
        exp_year: 2030,
        card_cvv: '123',
        customer_email: 'payer@example.com',
        server_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`,
      });
      const hmac = createHmac('sha256', SECRET).update(body).digest('hex');
      const created = await fetch(`${server.url}/api/v1/payment`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-auth': `SVC-HMAC-SHA256 ${apiKey}:${hmac}`,
          'x-api-key': endpointsKey,
        },
        body,
      });
      expect(created.status).toBe(200);
      await server.fake.idle();
      const sent = server.fake.deliveries[0]!.notification as Record<string, string>;
      expect(sent.cc_token).toMatch(/\w{8}/);
      const get = (path: string) =>
        fetch(new URL(path, live.url), { headers: { 'x-payhook-token': live.token } }).then((r) => r.text());
      const shown = (await get('/deliveries')) + (await get('/delivery?id=0'));
      const { delivery } = JSON.parse(await get('/delivery?id=0'));
      expect(delivery.notification).toMatchObject({
        order_id: 'o-masked',
        cc_token: '[masked]',
        customer_email: '[masked]',
        receipt_url: '[masked]',
      });
      for (const secret of [sent.cc_token, 'payer@example.com', sent.receipt_url, '4242424242424242']) {
        expect(secret).toBeTruthy();
        expect(shown).not.toContain(secret);
      }
    } finally {
      await live.close();
      receiver.close();
      await server.close();
    }
  });
});
