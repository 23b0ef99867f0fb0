import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listen } from '../../../../test/support/listen.ts';
import { closing, startApp } from '../../test/app.js';
import { ADMIN, deliver, delivery, digest, SERVICE, SIGNING_SECRET } from '../../test/kit.js';
import { FileJournal } from '../journal/file.js';
import { MemoryJournal } from '../journal/memory.js';
import { createRelayServer } from '../node.js';
import { createRelay, type Relay } from '../relay.js';
import { createRelayChannel, relayStatus, replayRelay } from './admin.js';
import { type ConnectReport, connectRelay } from './connect.js';
import { fileCursor } from './cursor.js';

const root = mkdtempSync(join(tmpdir(), 'payhook-relay-client-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function serveRelay(relay: Relay): Promise<string> {
  return listen(createRelayServer(relay));
}

/** Runs the client until the returned `stop` is called; its reports and how it ended. */
function runClient(options: Omit<Parameters<typeof connectRelay>[0], 'signal'>) {
  const stop = new AbortController();
  const reports: ConnectReport[] = [];
  const done = connectRelay({
    ...options,
    reconnect: { initialMs: 20, maxMs: 100 },
    retry: { initialMs: 10, maxMs: 50 },
    signal: stop.signal,
    onReport: (report) => reports.push(report),
  });
  closing.push(async () => {
    stop.abort();
    await done.catch(() => {});
  });
  return {
    reports,
    done,
    async stop() {
      stop.abort();
      await done;
    },
  };
}

async function setup(transport: 'sse' | 'long-poll' = 'sse') {
  const journal = await FileJournal.open({ directory: mkdtempSync(join(root, 'journal-')) });
  const relay = createRelay({ journal, adminToken: ADMIN, signingSecret: SIGNING_SECRET, logger: false });
  closing.push(() => relay.close());
  const base = await serveRelay(relay);
  const created = await createRelayChannel({ relay: base, adminToken: ADMIN, name: 'alice' });
  const app = await startApp(created.key);
  const cursorPath = join(mkdtempSync(join(root, 'cursor-')), 'alice.json');
  const client = () =>
    runClient({
      url: created.connectUrl,
      token: created.token,
      forwardTo: app.url,
      cursor: fileCursor(cursorPath),
      transport,
    });
  return { relay, base, created, app, client };
}

describe.each(['sse', 'long-poll'] as const)('connectRelay over %s', (transport) => {
  it('forwards each delivery byte for byte: the SHA-256 at the app equals the one at the sender', async () => {
    const { relay, app, client } = await setup(transport);
    client();
    for (let n = 1; n <= 20; n++) expect((await deliver(relay, 'alice', delivery(n))).status).toBe(200);
    await app.waitFor(20);
    expect(app.received.map((r) => r.sha256)).toEqual(
      Array.from({ length: 20 }, (_, i) => digest(delivery(i + 1))),
    );
    expect(app.received.every((r) => r.signedSha256 === r.sha256 && r.sender === SERVICE)).toBe(true);
    expect(app.received.map((r) => r.outcome)).toEqual(Array(20).fill('handled'));
  });

  it('stopped, then 200 more, then restarted: all 200 arrive in order, none lost, none twice', async () => {
    const { relay, app, client } = await setup(transport);
    const first = client();
    for (let n = 1; n <= 10; n++) await deliver(relay, 'alice', delivery(n));
    await app.waitFor(10);
    await first.stop();
    for (let n = 11; n <= 210; n++) expect((await deliver(relay, 'alice', delivery(n))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(app.received).toHaveLength(10);
    client();
    await app.waitFor(210);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(app.received.map((r) => r.sequence)).toEqual(Array.from({ length: 210 }, (_, i) => i + 1));
    expect([...app.handled.values()].every((count) => count === 1)).toBe(true);
    expect(app.handled.size).toBe(210);
  });
});

describe('connectRelay to an app whose core has the relay option', () => {
  it('has allowedSenders check the original sender: the service’s delivery handled, another sender’s refused 403', async () => {
    const { relay, app, client } = await setup('long-poll');
    client();
    expect((await deliver(relay, 'alice', delivery(1))).status).toBe(200);
    expect((await deliver(relay, 'alice', delivery(2), '203.0.113.9')).status).toBe(200);
    await app.waitFor(2);
    expect(app.received.map((r) => [r.sequence, r.sender, r.outcome, r.code])).toEqual([
      [1, SERVICE, 'handled', undefined],
      [2, '203.0.113.9', 'refused', 'sender.forbidden'],
    ]);
  });
});

describe('connectRelay', () => {
  it('retries a delivery the app answered 503 until it takes it, and reports each answer', async () => {
    const journal = new MemoryJournal();
    const relay = createRelay({ journal, adminToken: ADMIN, signingSecret: SIGNING_SECRET, logger: false });
    const base = await serveRelay(relay);
    const created = await createRelayChannel({ relay: base, adminToken: ADMIN, name: 'alice' });
    let calls = 0;
    const app = await listen(
      createServer((_req, res) => {
        calls += 1;
        res.writeHead(calls < 3 ? 503 : 200).end(calls < 3 ? '' : '{"ok":true,"outcome":"handled"}');
      }),
    );
    const run = runClient({ url: created.connectUrl, token: created.token, forwardTo: app });
    await deliver(relay, 'alice', delivery(1));
    while (!run.reports.some((r) => r.type === 'delivered'))
      await new Promise((resolve) => setTimeout(resolve, 10));
    const answers = run.reports.filter((r) => r.type === 'retrying' || r.type === 'delivered');
    expect(answers.map((r) => [r.type, 'answer' in r ? r.answer.status : 0])).toEqual([
      ['retrying', 503],
      ['retrying', 503],
      ['delivered', 200],
    ]);
    expect(run.reports.find((r) => r.type === 'delivered')).toMatchObject({ answer: { outcome: 'handled' } });
  });

  it('moves on from a delivery the app refused for good (a 4xx), reporting it', async () => {
    const relay = createRelay({
      journal: new MemoryJournal(),
      adminToken: ADMIN,
      signingSecret: SIGNING_SECRET,
      logger: false,
    });
    const base = await serveRelay(relay);
    const created = await createRelayChannel({ relay: base, adminToken: ADMIN, name: 'alice' });
    const app = await listen(createServer((_req, res) => res.writeHead(401).end()));
    const run = runClient({ url: created.connectUrl, token: created.token, forwardTo: app });
    await deliver(relay, 'alice', delivery(1));
    await deliver(relay, 'alice', delivery(2));
    while (run.reports.filter((r) => r.type === 'refused').length < 2)
      await new Promise((r) => setTimeout(r, 10));
    expect(run.reports.filter((r) => r.type === 'refused').map((r) => 'sequence' in r && r.sequence)).toEqual(
      [1, 2],
    );
  });

  it('rejects with relay.refused on a wrong token, without retrying', async () => {
    const relay = createRelay({
      journal: new MemoryJournal(),
      adminToken: ADMIN,
      signingSecret: SIGNING_SECRET,
      logger: false,
    });
    const base = await serveRelay(relay);
    const created = await createRelayChannel({ relay: base, adminToken: ADMIN, name: 'alice' });
    const run = runClient({ url: created.connectUrl, token: 'phr_wrong', forwardTo: 'http://127.0.0.1:9/' });
    await expect(run.done).rejects.toMatchObject({ code: 'relay.refused' });
    expect(run.reports.filter((r) => r.type === 'disconnected')).toEqual([]);
  });

  it('rejects with relay.unreachable after maxReconnects failed attempts in a row, instead of hanging', async () => {
    const stopped = await listen(createServer());
    const port = new URL(stopped).port;
    await closing.pop()!();
    const reports: ConnectReport[] = [];
    // Counted, not timed: a client that went on past its 4 attempts is stopped at its 5th report, and then ends
    // some other way than relay.unreachable.
    const stop = new AbortController();
    await expect(
      connectRelay({
        url: `http://127.0.0.1:${port}/out/alice`,
        token: 'phr_x',
        forwardTo: 'http://127.0.0.1:9/',
        maxReconnects: 4,
        reconnect: { initialMs: 10, maxMs: 20 },
        signal: stop.signal,
        onReport: (report) => {
          reports.push(report);
          if (reports.length > 4) stop.abort();
        },
      }),
    ).rejects.toMatchObject({ code: 'relay.unreachable' });
    expect(reports.map((r) => r.type)).toEqual(['disconnected', 'disconnected', 'disconnected']);
    expect(reports[0]).toMatchObject({ reason: 'ECONNREFUSED', failures: 1 });
  });

  it('refuses a cursor file of another channel', async () => {
    const path = join(mkdtempSync(join(root, 'cursor-')), 'c.json');
    await fileCursor(path).save({ url: 'http://relay/out/bob', sequence: 3, deliveredAt: 1 });
    await expect(
      connectRelay({
        url: 'http://relay/out/alice',
        token: 't',
        forwardTo: 'http://app/',
        cursor: fileCursor(path),
      }),
    ).rejects.toThrow(/belongs to http:\/\/relay\/out\/bob/);
  });
});

describe('replayRelay and relayStatus', () => {
  it('sends a range again, in order, and the app answers the copies duplicate', async () => {
    const { relay, base, created, app, client } = await setup();
    client();
    for (let n = 1; n <= 5; n++) await deliver(relay, 'alice', delivery(n));
    await app.waitFor(5);
    const answers: [number, string | undefined][] = [];
    const sent = await replayRelay({
      url: created.connectUrl,
      token: created.token,
      from: 2,
      to: 4,
      target: app.url,
      onAnswer: (sequence, answer) => answers.push([sequence, answer.outcome]),
    });
    expect(sent).toBe(3);
    expect(answers).toEqual([
      [2, 'duplicate'],
      [3, 'duplicate'],
      [4, 'duplicate'],
    ]);
    const status = await relayStatus({ url: `${base}/out/alice`, token: created.token });
    expect(status).toMatchObject({ channel: 'alice', last: 5, oldest: 1, retained: 5 });
  });
});
