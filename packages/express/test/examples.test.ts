import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningExample, startExample } from '../../../examples/shared/src/child.ts';
import { purchase, refund } from '../../../examples/shared/src/deliveries.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';

const SECRET = 'examples-test-secret';
const DIST = ['core', 'express', 'fastify', 'koa', 'nestjs'].map((name) => `../../${name}/dist/index.js`);

// The examples run as their `npm start` does, over the built packages (`pnpm build`, which `pnpm test` runs first).
describe.each(['express', 'koa', 'fastify', 'nestjs'] as const)('examples/%s as a child process', (name) => {
  let example: RunningExample | undefined;

  beforeAll(() => {
    const missing = DIST.filter((path) => !existsSync(fileURLToPath(new URL(path, import.meta.url))));
    if (missing.length > 0)
      throw new Error(`build the packages first (pnpm build): missing ${missing.join(', ')}`);
  });

  afterEach(async () => {
    await example?.stop();
    example = undefined;
  });

  it('shows src/server.ts verbatim in its README quick start', () => {
    const read = (path: string) =>
      readFileSync(new URL(`../../../examples/${name}/${path}`, import.meta.url), 'utf8');
    const snippet = /<!-- quick start: begin -->[\s\S]*?```ts\n([\s\S]*?)```\n<!-- quick start: end -->/.exec(
      read('README.md'),
    );
    expect(snippet?.[1]).toBe(read('src/server.ts'));
  });

  it('prints listening, answers a signed webhook, prints it as one JSON line, and exits 0 on SIGTERM', async () => {
    example = await startExample(name, SECRET);
    expect(example.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const post = (body: string) =>
      fetch(`${example!.url}/webhooks`, { method: 'POST', headers: { 'content-type': FORM }, body });

    const first = await post(signedForm(refund({ operation_id: `op-${name}` }), SECRET));
    expect([first.status, await first.text()]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
    const forged = await post(signedForm(purchase(), 'not the secret'));
    expect(forged.status).toBe(401);

    expect(await example.waitForLines(1)).toEqual([
      {
        payment_id: '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c',
        order_id: 'order-1001',
        operation_id: `op-${name}`,
        method: 'refund',
        status: 'success',
        status_code: '1000',
        amount: 100,
        currency: 'UAH',
        key: `op-${name}:refund:success:1000`,
      },
    ]);
    const { code, signal } = await example.stop();
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(example.stderr).toContain('[payhook example] closed');
    expect(example.lines).toHaveLength(1);
  });

  it('answers other methods on /webhooks with 405 and Allow: POST, and other paths with 404', async () => {
    example = await startExample(name, SECRET);
    for (const method of ['GET', 'OPTIONS', 'PUT']) {
      const answer = await fetch(`${example.url}/webhooks`, { method });
      expect([method, answer.status, answer.headers.get('allow'), (await answer.json()).error.code]).toEqual([
        method,
        405,
        'POST',
        'request.method_not_allowed',
      ]);
    }
    expect((await fetch(`${example.url}/health`)).status).toBe(404);
  });

  it('refuses to start without WEBHOOK_SECRET, saying why, with exit code 1', async () => {
    await expect(startExample(name, '')).rejects.toThrow(
      `the ${name} example exited with 1 before listening: [payhook example] WEBHOOK_SECRET is not set`,
    );
  });
});
