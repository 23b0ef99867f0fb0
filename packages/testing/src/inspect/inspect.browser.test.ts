import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createNodeListener, createWebhookHandler } from '@payhook/core';
import { createPaymentLedger, type LedgerFact, MemoryLedgerStore } from '@payhook/payments';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningExample, startExample } from '../../../../examples/shared/src/child.ts';
import { canRunChromium, launchChromium } from '../../test/chromium.js';
import { assertBuilt } from '../../test/run-cli.js';
import { memoryIO } from '../cli/io.js';
import { runCli } from '../cli/run.js';
import { fakePurchase } from '../fixtures/primary.js';
import { fakeRefund } from '../fixtures/secondary.js';
import { startFakeServer } from '../server.js';
import { type Inspector, startInspector } from './server.js';

const SECRET = 'inspect-browser-secret';
const run = promisify(execFile);
const AT = '2026-11-26T10:00:00.000Z';

function line(fields: Record<string, unknown>): string {
  return JSON.stringify({ v: 1, at: AT, status: 200, outcome: 'handled', ...fields });
}

/** Where the tests leave their screenshots (looked at by whoever changes the page). */
const SCREENSHOTS = process.env.PAYHOOK_SCREENSHOTS ?? join(tmpdir(), 'payhook-inspect-screenshots');

async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

async function open(
  browser: Browser,
  inspector: Inspector,
  loaded: number,
  viewport = { width: 1400, height: 900 },
): Promise<Page> {
  const page = await browser.newPage({ viewport });
  const outside: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(new URL(inspector.url).origin) && !request.url().startsWith('data:')) {
      outside.push(request.url());
    }
  });
  page.on('dialog', (dialog) => {
    outside.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  (page as Page & { outside?: string[] }).outside = outside;
  await page.goto(inspector.url);
  await page.waitForSelector(`body[data-loaded="${loaded}"]`);
  return page;
}

const rowsShown = (page: Page) => page.locator('#rows tr').count();

describe.skipIf(!canRunChromium)('payhook inspect in Chromium, used as a developer would', () => {
  let dir: string;
  let browser: Browser;
  let example: RunningExample;
  const paid = fakePurchase({ order_id: 'order-paid' }, { seed: 'inspect-browser' });

  beforeAll(async () => {
    assertBuilt();
    dir = await mkdtemp(join(tmpdir(), 'payhook-inspect-browser-'));
    [browser, example] = await Promise.all([launchChromium(), startExample('express', SECRET)]);
  });
  afterAll(async () => {
    await browser?.close();
    await example?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('filters, shows what a redelivery changed, replays an edit to the running example and saves a fixture that runs', async () => {
    const capture = join(dir, 'incident.jsonl');
    await writeFile(
      capture,
      `${[
        line({ notification: paid }),
        line({ outcome: 'duplicate', notification: paid }),
        JSON.stringify({
          v: 2,
          at: AT,
          status: 401,
          outcome: 'refused',
          code: 'signature.invalid',
          hint: 'sha1',
        }),
        line({ notification: { ...paid, new_field: 'grown' } }),
      ].join('\n')}\n`,
    );
    const inspector = await startInspector({
      capture,
      secret: SECRET,
      fixtures: join(dir, 'fixtures'),
      target: `${example.url}/webhooks`,
    });
    try {
      const page = await open(browser, inspector, 4);
      expect(await rowsShown(page)).toBe(4);
      await page.selectOption('#filter-outcome', 'duplicate');
      expect(await rowsShown(page)).toBe(1);
      await page.selectOption('#filter-outcome', 'refused');
      await page.locator('#rows tr').first().click();
      await expect.poll(() => page.locator('#detail').textContent()).toContain('sha1');
      await page.selectOption('#filter-outcome', '');

      await page.locator('#rows tr[data-id="3"]').click();
      await page.waitForSelector('#detail table.diff');
      const diff = await page.locator('#detail table.diff').first().textContent();
      expect(diff).toContain('new_field');
      expect(diff).toContain('"grown"');

      const edited = fakePurchase({ order_id: 'order-edited' }, { seed: 'inspect-edited' });
      await page.fill('#edit', JSON.stringify(edited, null, 2));
      await page.click('#replay');
      await page.waitForSelector('#answers tr');
      expect(await page.locator('#answers tr').first().textContent()).toMatch(/200 handled/);
      const [handled] = await example.waitForLines(1);
      expect(handled).toMatchObject({ order_id: 'order-edited' });

      await page.fill('#fixture-name', 'order-edited');
      await page.click('#save');
      await expect
        .poll(() => page.locator('#action-message').textContent())
        .toMatch(/^Saved in .*order-edited\.json/);
      expect(JSON.parse(await readFile(join(dir, 'fixtures', 'order-edited.json'), 'utf8'))).toEqual(edited);
      const { io, out } = memoryIO('', { PAYHOOK_SECRET: SECRET });
      const replayed = await runCli(
        ['replay', join(dir, 'fixtures', 'order-edited.jsonl'), '--url', `${example.url}/webhooks`],
        io,
      );
      expect(replayed).toBe(0);
      expect(out).toEqual([
        'line 1: purchase success order order-edited (captured 200 handled) → 200 {"ok":true,"outcome":"duplicate"}',
        'replayed 1: 1 answered 2xx, 0 not',
      ]);
      expect((page as Page & { outside?: string[] }).outside).toEqual([]);
      await page.close();
    } finally {
      await inspector.close();
    }
  });

  it('renders a hostile capture as text: script tags, control characters and a 2 MB field', async () => {
    const capture = join(dir, 'hostile.jsonl');
    const order = '<script>alert(1)</script><img src=x onerror=alert(2)>\u001b[31m\u0007';
    const hostile = fakePurchase(
      { order_id: order, description: 'x'.repeat(2 * 1024 * 1024) },
      { seed: 'hostile' },
    );
    await writeFile(capture, `${line({ notification: hostile, outcome: '<b>handled</b>' })}\n`);
    const inspector = await startInspector({ capture });
    try {
      const page = await open(browser, inspector, 1);
      expect(await page.locator('script').count()).toBe(1);
      expect(await page.locator('img').count()).toBe(0);
      const cell = await page.locator('#rows tr td').nth(4).textContent();
      expect(cell).toBe(`${order.slice(0, 40)}…`);
      await page.locator('#rows tr').first().click();
      await page.waitForSelector('#notification');
      expect(await page.locator('#detail dd').nth(3).textContent()).toBe(
        '<script>alert(1)</script><img src=x onerror=alert(2)>\\u001b[31m\\u0007',
      );
      expect(await page.locator('script').count()).toBe(1);
      expect((page as Page & { outside?: string[] }).outside).toEqual([]);
      await page.close();
    } finally {
      await inspector.close();
    }
  });

  it('opens and filters a capture of 10,000 deliveries, one page of rows at a time', async () => {
    const capture = join(dir, 'large.jsonl');
    const lines = Array.from({ length: 10_000 }, (_, i) =>
      line({
        notification: fakePurchase({ order_id: `order-${i}` }, { seed: `large-${i}` }),
        outcome: i % 10 === 0 ? 'duplicate' : 'handled',
      }),
    );
    await writeFile(capture, `${lines.join('\n')}\n`);
    const inspector = await startInspector({ capture });
    try {
      const started = performance.now();
      const page = await open(browser, inspector, 10_000);
      const opened = performance.now();
      expect(await rowsShown(page)).toBe(100);
      await page.fill('#filter-order', 'order-9999');
      await expect.poll(() => rowsShown(page)).toBe(1);
      await page.fill('#filter-order', '');
      await page.selectOption('#filter-outcome', 'duplicate');
      await expect
        .poll(() => page.locator('#page-info').textContent())
        .toBe('Page 1 of 10 · 1000 of 10000 deliveries');
      console.log(
        `payhook inspect: 10,000 deliveries opened in ${Math.round(opened - started)} ms, filtered twice by ${Math.round(performance.now() - opened)} ms more`,
      );
      await page.close();
    } finally {
      await inspector.close();
    }
  });

  it('shows bidi controls (U+202E) as escapes, never raw, in the list and in the delivery', async () => {
    const capture = join(dir, 'bidi.jsonl');
    const order = 'order-\u202Efdp.exe';
    await writeFile(
      capture,
      `${line({ notification: fakePurchase({ order_id: order }, { seed: 'bidi' }) })}\n`,
    );
    const inspector = await startInspector({ capture });
    try {
      const page = await open(browser, inspector, 1);
      await page.locator('#rows tr').first().click();
      await page.waitForSelector('#notification');
      expect(await page.locator('#rows tr td').nth(4).textContent()).toBe('order-\\u202efdp.exe');
      expect(await page.locator('#notification').textContent()).toContain('order-\\u202efdp.exe');
      const shown = await page.evaluate(() =>
        Array.from(document.querySelectorAll('header, main, #replays'))
          .map((e) => e.textContent)
          .join(''),
      );
      expect(shown).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/);
      await page.close();
    } finally {
      await inspector.close();
    }
  });

  it.each([
    [1280, 800],
    [420, 860],
    [1920, 1000],
  ])(
    'holds its layout at %i px: long names wrap inside their panels and the Answer column shows',
    async (width, height) => {
      const capture = join(dir, `wide-${width}.jsonl`);
      const long = 'x'.repeat(300);
      await writeFile(
        capture,
        `${[
          line({ notification: paid }),
          line({
            status: 500,
            outcome: 'refused',
            code: 'handler.failed',
            notification: {
              ...paid,
              order_id: `order-${long}`,
              method: `purchase${long}`,
              [`field_${long}`]: long,
            },
          }),
        ].join('\n')}\n`,
      );
      const inspector = await startInspector({ capture, secret: SECRET, target: `${example.url}/webhooks` });
      try {
        const page = await open(browser, inspector, 2, { width, height });
        for (const id of ['0', '1']) {
          await page.locator(`#rows tr[data-id="${id}"]`).click();
          await expect.poll(() => page.locator('#detail h2').textContent()).toBe(`Delivery #${id}`);
          const overflow = await page.evaluate(() => ({
            page: document.documentElement.scrollWidth - window.innerWidth,
            panels: Array.from(document.querySelectorAll('section')).map(
              (s) => s.scrollWidth - s.clientWidth,
            ),
          }));
          expect(overflow.page).toBeLessThanOrEqual(0);
          expect(Math.max(...overflow.panels)).toBeLessThanOrEqual(0);
        }
        const list = await page.locator('section[aria-label="Deliveries"]').boundingBox();
        const answer = await page
          .locator('section[aria-label="Deliveries"] th', { hasText: 'Answer' })
          .boundingBox();
        const cell = await page.locator('#rows tr[data-id="1"] td.answer').boundingBox();
        for (const box of [answer, cell]) {
          expect(box!.width).toBeGreaterThan(40);
          expect(box!.x + box!.width).toBeLessThanOrEqual(list!.x + list!.width);
        }
        expect(await page.locator('#rows tr[data-id="1"] td.answer').textContent()).toContain('500');
        await screenshot(page, `layout-${width}`);
        await page.close();
      } finally {
        await inspector.close();
      }
    },
  );

  it.each([
    [420, 860],
    [1280, 800],
  ])(
    "shows a payment's ledger state and history beside its deliveries at %i px, escaped and without overflow",
    async (width, height) => {
      const capture = join(dir, `ledger-${width}.jsonl`);
      const refund = fakeRefund({}, { of: paid, seed: 'ledger-refund' });
      await writeFile(
        capture,
        `${[line({ notification: paid }), line({ notification: refund })].join('\n')}\n`,
      );
      const store = new MemoryLedgerStore();
      const long = 'y'.repeat(300);
      const facts: LedgerFact[] = [
        { k: `k-paid-${long}`, m: 'purchase', s: 'success', d: 'p', a: 1250, c: 'UAH', at: Date.parse(AT) },
        {
          k: 'k-refund',
          m: 'refund',
          s: 'success',
          d: 's',
          a: 500,
          c: 'UAH',
          o: `r-\u202Egpj.exe-${long}`,
          at: Date.parse(AT) + 60_000,
        },
        {
          k: 'k-pending',
          m: 'purchase',
          s: 'pending',
          d: 'p',
          a: 1250,
          c: 'UAH',
          at: Date.parse(AT) + 120_000,
        },
      ];
      for (const fact of facts) await store.append(paid.order_id, fact);
      const inspector = await startInspector({
        capture,
        ledger: createPaymentLedger({ store, logger: false }),
      });
      try {
        const page = await open(browser, inspector, 2, { width, height });
        await page.locator('#rows tr[data-id="0"]').click();
        await expect
          .poll(() => page.locator('#detail h3', { hasText: 'Ledger' }).textContent())
          .toBe('Ledger: partially_refunded');
        const ledger = (await page.locator('#ledger').textContent()) ?? '';
        expect(ledger).toContain('Paid12.5 UAH');
        expect(ledger).toContain('Refunded5 UAH');
        const history = await page.locator('#ledger-history tbody tr').allTextContents();
        expect(history).toHaveLength(2);
        expect(history[0]).toContain('v1 new → paid');
        expect(history[1]).toContain('v2 paid → partially_refunded (refund r-\\u202egpj.exe-');
        const recorded = await page.locator('#ledger-deliveries tbody tr').allTextContents();
        expect(recorded.map((row) => row.match(/moved|stale|news|conflict/)?.[0])).toEqual([
          'moved',
          'moved',
          'stale',
        ]);
        expect(await page.locator('#detail').textContent()).not.toContain('\u202E');
        const overflow = await page.evaluate(() => ({
          page: document.documentElement.scrollWidth - window.innerWidth,
          panels: Array.from(document.querySelectorAll('section')).map((s) => s.scrollWidth - s.clientWidth),
        }));
        expect(overflow.page).toBeLessThanOrEqual(0);
        expect(Math.max(...overflow.panels)).toBeLessThanOrEqual(0);
        await screenshot(page, `ledger-${width}`);
        await page.close();
      } finally {
        await inspector.close();
      }
    },
  );

  it('says on the page that the ledger could not be read, and that it holds nothing for an order', async () => {
    const capture = join(dir, 'ledger-unreadable.jsonl');
    const other = fakePurchase({ order_id: 'order-unrecorded' }, { seed: 'ledger-other' });
    await writeFile(capture, `${[line({ notification: paid }), line({ notification: other })].join('\n')}\n`);
    const failing = {
      get: async (orderId: string) => {
        if (orderId === paid.order_id)
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
        return undefined;
      },
    };
    const inspector = await startInspector({ capture, ledger: failing });
    try {
      const page = await open(browser, inspector, 2);
      await page.locator('#rows tr[data-id="0"]').click();
      await expect
        .poll(() => page.locator('#ledger').textContent())
        .toBe('The ledger could not be read: connect ECONNREFUSED 127.0.0.1:6379');
      await page.locator('#rows tr[data-id="1"]').click();
      await expect
        .poll(() => page.locator('#ledger').textContent())
        .toBe('The ledger holds nothing for this order.');
      await page.close();
    } finally {
      await inspector.close();
    }
  });

  it('is used from the keyboard: / searches, arrows and j/k move through deliveries, Enter opens one', async () => {
    const capture = join(dir, 'keyboard.jsonl');
    await writeFile(
      capture,
      `${[0, 1, 2].map((i) => line({ notification: fakePurchase({ order_id: `key-${i}` }, { seed: `key-${i}` }) })).join('\n')}\n`,
    );
    const inspector = await startInspector({ capture });
    try {
      const page = await open(browser, inspector, 3);
      const focused = () =>
        page.evaluate(() => document.activeElement?.id || document.activeElement?.getAttribute('data-id'));
      const opened = () => page.locator('#detail h2').textContent();
      const order = await page
        .locator('#rows tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
      await page.keyboard.press('/');
      expect(await focused()).toBe('filter-order');
      await page.keyboard.type('key-1');
      await expect.poll(() => rowsShown(page)).toBe(1);
      await page.keyboard.press('Escape');
      expect(await focused()).toBe('1');
      await page.keyboard.press('Enter');
      await expect.poll(opened).toBe('Delivery #1');
      await page.keyboard.press('/');
      await page.keyboard.press('Control+A');
      await page.keyboard.press('Backspace');
      await expect.poll(() => rowsShown(page)).toBe(3);
      await page.keyboard.press('Escape');
      expect(await focused()).toBe(order[0]);
      await page.keyboard.press('ArrowDown');
      expect(await focused()).toBe(order[1]);
      await expect.poll(opened).toBe(`Delivery #${order[1]}`);
      await page.keyboard.press('j');
      await expect.poll(opened).toBe(`Delivery #${order[2]}`);
      await page.keyboard.press('k');
      await expect.poll(opened).toBe(`Delivery #${order[1]}`);
      await page.keyboard.press('x');
      expect(await page.locator(`#rows tr[data-id="${order[1]}"] input[type=checkbox]`).isChecked()).toBe(
        true,
      );
      await page.close();
    } finally {
      await inspector.close();
    }
  });

  it("groups a payment's deliveries, searches by order, payment or operation id, newest first, and copies a delivery as a cURL command that runs", async () => {
    const capture = join(dir, 'payment.jsonl');
    const other = fakePurchase({ order_id: 'order-other' }, { seed: 'other' });
    const refund = fakeRefund({}, { of: paid, seed: 'refund' });
    await writeFile(
      capture,
      `${[
        line({ notification: paid }),
        line({ notification: other }),
        line({ notification: refund }),
        line({ outcome: 'duplicate', notification: paid }),
      ].join('\n')}\n`,
    );
    const inspector = await startInspector({ capture, secret: SECRET, target: `${example.url}/webhooks` });
    try {
      const page = await open(browser, inspector, 4);
      const ids = () =>
        page.locator('#rows tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
      expect(await ids()).toEqual(['3', '2', '1', '0']);
      await page.fill('#filter-order', paid.payment_id);
      await expect.poll(ids).toEqual(['3', '2', '0']);
      await page.fill('#filter-order', refund.operation_id);
      await expect.poll(ids).toEqual(['2']);
      await page.fill('#filter-order', 'order-other');
      await expect.poll(ids).toEqual(['1']);
      await page.fill('#filter-order', '');

      await page.locator('#rows tr[data-id="0"]').click();
      await expect.poll(() => page.locator('#detail .group').textContent()).toContain('refund.success');
      expect(await page.locator('#detail h3', { hasText: 'This payment' }).textContent()).toBe(
        'This payment (3 deliveries)',
      );
      await page.locator('#detail .group button', { hasText: 'refund.success' }).click();
      await expect.poll(() => page.locator('#detail h2').textContent()).toBe('Delivery #2');
      expect(await page.locator('#detail dl').first().textContent()).toContain(refund.operation_id);

      await page.click('#copy-curl');
      await page.waitForSelector('#curl:not([hidden])');
      const command = (await page.locator('#curl').textContent()) ?? '';
      expect(command).toMatch(
        new RegExp(
          `^curl -sS -i -X POST '${example.url}/webhooks' -H 'content-type: application/x-www-form-urlencoded'`,
        ),
      );
      const before = example.lines.length;
      const { stdout } = await run('sh', ['-c', command]);
      expect(stdout).toMatch(/^HTTP\/1\.1 200/);
      expect(stdout).toContain('"outcome":"handled"');
      const handled = (await example.waitForLines(before + 1)).at(-1);
      expect(handled).toMatchObject({ order_id: paid.order_id, method: 'refund' });
      await screenshot(page, 'payment-group');
      await page.close();
    } finally {
      await inspector.close();
    }
  });

  it("shows a live fake service's attempts: the request URL, the answer's body, the handler's error, masked values", async () => {
    const server = await startFakeServer({ secret: SECRET, seed: 21 });
    const webhook = createWebhookHandler<IncomingMessage>({ secret: SECRET, logger: false }).onAny(() => {
      throw new Error('the shop database is down');
    });
    const receiver = createServer(createNodeListener(webhook));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const serverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
    const inspector = await startInspector({
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
        customer_email: 'payer@example.com',
        server_url: serverUrl,
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
      const token = (server.fake.deliveries[0]!.notification as { cc_token: string }).cc_token;
      const page = await open(browser, inspector, 1);
      await page.locator('#rows tr').first().click();
      await page.waitForSelector('#answer-body');
      const detail = (await page.locator('#detail').textContent()) ?? '';
      expect(detail).toContain(`POST ${serverUrl} · attempt 1`);
      expect(detail).toContain('500 refused handler.failed');
      expect(await page.locator('#detail dd', { hasText: 'handler.failed:' }).count()).toBe(1);
      expect(await page.locator('#answer-body').textContent()).toContain('"code":"handler.failed"');
      expect(detail).toContain('content-typeapplication/json; charset=utf-8');
      expect(await page.locator('#notification').textContent()).toContain('"cc_token": "[masked]"');
      for (const secret of [token, 'payer@example.com', '4242424242424242'])
        expect(detail).not.toContain(secret);
      await screenshot(page, 'live');
      await page.close();
    } finally {
      await inspector.close();
      receiver.close();
      await server.close();
    }
  });

  it('says at the top of the page that the capture file does not exist', async () => {
    const missing = join(dir, 'missing.jsonl');
    const inspector = await startInspector({ capture: missing });
    try {
      const page = await browser.newPage();
      await page.goto(inspector.url);
      await expect
        .poll(() => page.locator('#problems[role="alert"]').textContent())
        .toBe(
          `the capture file ${missing} does not exist (yet): nothing to show until something writes it. Is the path right?`,
        );
      await page.close();
    } finally {
      await inspector.close();
    }
  });

  it('answers 403 to the page without its token', async () => {
    const inspector = await startInspector({ capture: join(dir, 'large.jsonl') });
    try {
      const page = await browser.newPage();
      const response = await page.goto(inspector.url.replace(/\?token=.*/, ''));
      expect(response?.status()).toBe(403);
      await page.close();
    } finally {
      await inspector.close();
    }
  });
});
