import { describe, expect, it, vi } from 'vitest';
import { signedForm } from '../../../test/support/signed-form.ts';
import { formBody, post, purchase, refund, SECRET, setup } from '../test/fixtures.js';
import { rankLedger } from '../test/ledger.js';
import { createWebhookHandler } from './handler.js';
import type { ClaimResult, DedupeStore, TransactionalStore } from './stores/contract.js';
import { MemoryStore } from './stores/memory.js';

// What the handler's options decide: which secrets verify, which handlers a notification reaches, and what the
// store's answers mean. handler.test.ts pins every answer, concurrency and bodies.

describe('createWebhookHandler: secrets', () => {
  it('reports which rotated secret matched', async () => {
    const indexes: number[] = [];
    const handler = createWebhookHandler({
      secret: [
        { id: 'new', secret: 'new-secret' },
        { id: 'old', secret: SECRET },
      ],
      logger: false,
      handle: (_, __, delivery) => void indexes.push(delivery.secretIndex),
    });
    await handler(post(formBody(purchase())), undefined);
    await handler(post(formBody(refund(), 'new-secret')), undefined);
    expect(indexes).toEqual([1, 0]);
  });

  it('picks secrets by pos_id and answers 401 secret.not_found for an unknown project', async () => {
    const { handler, seen } = setup({
      secret: (posId) => (posId === 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e' ? SECRET : undefined),
    });
    expect((await handler(post(formBody(purchase())), undefined)).status).toBe(200);
    const other = await handler(post(formBody(purchase({ pos_id: 'unknown' }))), undefined);
    expect(other.status).toBe(401);
    expect(JSON.parse(other.body).error.code).toBe('secret.not_found');
    expect(seen).toHaveLength(1);
  });

  it('answers 503 secret.unavailable, with Retry-After, when the resolver throws, and claims nothing', async () => {
    const onError = vi.fn();
    let failing = true;
    const { handler, seen } = setup({
      secret: async () => {
        if (failing) throw new Error('vault unreachable');
        return SECRET;
      },
      onError,
      logger: false,
    });
    const body = formBody(purchase());
    const refused = await handler(post(body), undefined);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(JSON.parse(refused.body).error.code).toBe('secret.unavailable');
    expect(refused.body).not.toContain('vault');
    expect(onError.mock.calls[0]![0].cause).toEqual(new Error('vault unreachable'));
    expect(seen).toHaveLength(0);
    // Nothing was claimed: the retry is handled.
    failing = false;
    expect(JSON.parse((await handler(post(body), undefined)).body).outcome).toBe('handled');
    expect(seen).toHaveLength(1);
  });

  it('answers a resolver that returns something other than a secret as a failure of the application (500)', async () => {
    for (const value of [42, {}, '']) {
      const logger = { warn: vi.fn(), error: vi.fn() };
      const { handler } = setup({ secret: async () => value as unknown as string, logger });
      const answer = await handler(post(formBody(purchase())), undefined);
      expect([answer.status, JSON.parse(answer.body).error.code]).toEqual([500, 'handler.failed']);
      expect(answer.error?.cause).toBeInstanceOf(TypeError);
    }
  });

  it('verifies SHA-1 signatures only when configured', async () => {
    const body = signedForm(purchase(), SECRET, { algorithm: 'sha1' });
    expect((await setup().handler(post(body), undefined)).status).toBe(401);
    expect((await setup({ algorithm: 'sha1' }).handler(post(body), undefined)).status).toBe(200);
  });

  it('warns once about a secret with surrounding whitespace, and refuses an empty one', () => {
    const warn = vi.fn();
    createWebhookHandler({ secret: `${SECRET}\n`, logger: { warn, error: vi.fn() } });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).not.toContain(SECRET);
    expect(() => createWebhookHandler({ secret: '' })).toThrow(/the secret option is an empty string/);
  });
});

describe('createWebhookHandler: routing', () => {
  it('routes by method, by method and status, and for recurring charges, narrowing the type', async () => {
    const calls: string[] = [];
    const handler = createWebhookHandler({ secret: SECRET, logger: false })
      .on('purchase', (n) => void calls.push(`purchase ${n.status}`))
      .on('refund.success', (n) => void calls.push(`refund ${n.operation_id}`))
      .on('recurring', (n) => void calls.push(`recurring ${n.recurring.id}`));
    await handler(post(formBody(purchase())), undefined);
    await handler(post(formBody(refund())), undefined);
    await handler(
      post(formBody(purchase({ transaction_id: 't9', recurring: { id: 'rec-7', status: 'active' } }))),
      undefined,
    );
    expect(calls).toEqual([
      'purchase success',
      'refund 5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9',
      'purchase success',
      'recurring rec-7',
    ]);
  });

  it('answers 200 ignored, without claiming, when no handler matches', async () => {
    const calls: string[] = [];
    const handler = createWebhookHandler({ secret: SECRET, logger: false }).on(
      'refund',
      () => void calls.push('r'),
    );
    const result = await handler(post(formBody(purchase())), undefined);
    expect(result).toMatchObject({ status: 200, outcome: 'ignored' });
    expect(calls).toEqual([]);
  });

  it('passes the framework context through to the handler', async () => {
    const contexts: string[] = [];
    const handler = createWebhookHandler<{ requestId: string }>({
      secret: SECRET,
      logger: false,
      handle: (_, context) => void contexts.push(context!.requestId),
    });
    await handler(post(formBody(purchase())), { requestId: 'req-1' });
    expect(contexts).toEqual(['req-1']);
  });

  it('answers 200 stale and 200 conflict, with no handler, for what the ledger decided so', async () => {
    const { ledger, records, after } = rankLedger();
    const { handler, seen } = setup({ ledger });
    const pending = purchase({ status: 'pending', status_code: '2122' });
    expect(await handler(post(formBody(purchase())), undefined)).toMatchObject({ outcome: 'handled' });
    const late = await handler(post(formBody(pending)), undefined);
    expect(late).toMatchObject({ status: 200, outcome: 'stale', body: '{"ok":true,"outcome":"stale"}' });
    const failure = purchase({ status: 'failure', status_code: '2001' });
    expect(await handler(post(formBody(failure)), undefined)).toMatchObject({
      status: 200,
      outcome: 'conflict',
    });
    expect(seen.map((n) => n.status)).toEqual(['success']);
    expect(records).toEqual(['success', 'pending', 'failure']);
    // The ledger's own listeners ran under each claim, after the handlers or alone.
    expect(after).toEqual(['handle:success', 'stale:pending', 'conflict:failure']);
  });

  it('records a notification no handler takes, and answers a stale copy redelivered duplicate', async () => {
    const { ledger, records } = rankLedger();
    const handler = createWebhookHandler({ secret: SECRET, logger: false, ledger });
    const pending = formBody(purchase({ status: 'pending', status_code: '2122' }));
    expect(await handler(post(formBody(purchase())), undefined)).toMatchObject({ outcome: 'handled' });
    expect(await handler(post(pending), undefined)).toMatchObject({ outcome: 'stale' });
    expect(await handler(post(pending), undefined)).toMatchObject({ outcome: 'duplicate' });
    expect(records).toEqual(['success', 'pending']);
  });

  it('answers 503 store.unavailable when the ledger fails, runs no handler, and handles the retry', async () => {
    let down = true;
    const { ledger } = rankLedger({ fail: () => down });
    const onError = vi.fn();
    const { handler, seen } = setup({ ledger, onError, logger: false });
    const body = formBody(purchase());
    const refused = await handler(post(body), undefined);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error.code).toBe('store.unavailable');
    expect(onError.mock.calls[0]![0].cause).toEqual(new Error('ledger down'));
    expect(seen).toHaveLength(0);
    down = false;
    expect(await handler(post(body), undefined)).toMatchObject({ outcome: 'handled' });
    expect(seen).toHaveLength(1);
  });
});

describe('createWebhookHandler: stores', () => {
  it('uses a transactional store: the work runs inside its transaction, a copy answers duplicate', async () => {
    const committed = new Set<string>();
    const store: TransactionalStore<{ writes: string[] }> = {
      name: 'fake-inbox',
      async transaction(key, work) {
        if (committed.has(key)) return { status: 'duplicate' };
        const tx = { writes: [] as string[] };
        const value = await work(tx);
        committed.add(key);
        return { status: 'done', value };
      },
    };
    const transactions: unknown[] = [];
    const { handler } = setup({
      store,
      handle: (_, __, delivery) => void transactions.push(delivery.transaction),
    });
    const body = formBody(purchase());
    expect((await handler(post(body), undefined)).outcome).toBe('handled');
    expect((await handler(post(body), undefined)).outcome).toBe('duplicate');
    expect(transactions).toEqual([{ writes: [] }]);
  });

  it('keeps answering 200 when the commit fails after the work succeeded', async () => {
    const memory = new MemoryStore();
    const errors: string[] = [];
    const store: DedupeStore = {
      name: 'flaky',
      claim: (key, lease): ClaimResult => memory.claim(key, lease),
      renew: (key, token, lease) => memory.renew(key, token, lease),
      commit: () => Promise.reject(new Error('timeout')),
      release: (key, token) => memory.release(key, token),
    };
    const { handler, seen } = setup({ store, onError: (error) => void errors.push(error.code) });
    expect((await handler(post(formBody(purchase())), undefined)).outcome).toBe('handled');
    expect(seen).toHaveLength(1);
    expect(errors).toEqual(['store.unavailable']);
  });

  it('reports every refusal to onError', async () => {
    const codes: string[] = [];
    const { handler } = setup({ onError: (error) => void codes.push(error.code) });
    await handler(post(formBody(purchase(), 'wrong')), undefined);
    await handler({ method: 'GET', headers: {} }, undefined);
    expect(codes).toEqual(['signature.invalid', 'request.method_not_allowed']);
  });
});
