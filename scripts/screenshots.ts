// Screenshots of the fake service's hosted checkout and 3DS page, and of `payhook inspect`, for the testing README (docs/images/), taken in
// Debian's Chromium from the sources: `pnpm screenshots`. Not a test: it asserts nothing, it shows.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { startFakeServer, TEST_CARDS } from '../packages/testing/src/fake.js';
import { fakePurchase, fakeRefund } from '../packages/testing/src/index.js';
import { startInspector } from '../packages/testing/src/inspect/server.js';
import { launchChromium } from '../packages/testing/test/chromium.js';

const out = fileURLToPath(new URL('../docs/images/', import.meta.url));
mkdirSync(out, { recursive: true });

/** `payhook inspect` over a small incident: a payment, its redelivery with a grown field, a refund, a forgery. */
async function inspectorScreenshot(browser: Browser): Promise<void> {
  const capture = join(mkdtempSync(join(tmpdir(), 'payhook-screenshots-')), 'incident.jsonl');
  const masked = {
    cc_token: '[masked]',
    cc_mask: '[masked]',
    customer_id: '[masked]',
    customer_phone: '[masked]',
    receipt_url: '[masked]',
  };
  const paid = {
    ...fakePurchase({ order_id: 'order-1042', amount: 349.5 }, { seed: 'screenshots' }),
    ...masked,
  };
  const at = (minute: number) => `2026-11-26T10:${String(minute).padStart(2, '0')}:00.000Z`;
  const lines = [
    { v: 2, at: at(1), status: 200, outcome: 'handled', durationMs: 12, notification: paid },
    {
      v: 2,
      at: at(2),
      status: 200,
      outcome: 'duplicate',
      durationMs: 1,
      notification: { ...paid, bank_short_name: 'Bank' },
    },
    {
      v: 2,
      at: at(3),
      status: 401,
      outcome: 'refused',
      code: 'signature.invalid',
      hint: 'sha1',
      durationMs: 0,
    },
    {
      v: 2,
      at: at(7),
      status: 200,
      outcome: 'handled',
      durationMs: 9,
      notification: fakeRefund({}, { of: paid }),
    },
  ];
  writeFileSync(capture, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  const inspector = await startInspector({
    capture,
    secret: 'test-secret',
    target: 'http://127.0.0.1:3000/webhooks',
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 980 } });
    await page.goto(inspector.url);
    await page.waitForSelector('body[data-loaded="4"]');
    await page.locator('#rows tr[data-id="1"]').click();
    await page.waitForSelector('#detail table.diff');
    await page.screenshot({ path: `${out}inspect.png` });
    console.log(`wrote ${out}inspect.png`);
  } finally {
    await inspector.close();
  }
}

const server = await startFakeServer({
  secret: 'screenshots',
  seed: 1,
  now: '2026-05-05T12:00:00Z',
  merchantName: 'Teapots & Co',
});
const browser = await launchChromium();
try {
  const { posId, apiKey, endpointsKey } = server.fake.project;
  const create = async (orderId: string): Promise<string> => {
    const response = await fetch(`${server.url}/api/v1/payment`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': `SVC ${apiKey}:${server.fake.project.apiSecret}`,
        'x-api-key': endpointsKey,
      },
      body: JSON.stringify({
        pos_id: posId,
        mode: 'hosted',
        method: 'purchase',
        amount: 349.5,
        currency: 'UAH',
        description: 'Cast-iron teapot and two cups',
        order_id: orderId,
        order_timeout: 900,
      }),
    });
    return response.headers.get('location') ?? '';
  };
  const page = await browser.newPage({ viewport: { width: 560, height: 660 } });

  await page.goto(await create('order-1042'));
  await page.getByLabel('Card number').fill('4242 4242 4242 4241');
  await page.getByLabel('Expiry date').fill('12/30');
  await page.getByLabel('CVV').fill('12');
  await page.getByLabel('Cardholder name').fill('Ada Lovelace');
  // Each field is checked as the customer leaves it: the number fails Luhn, the CVV is short.
  await page.screenshot({ path: `${out}checkout.png`, fullPage: true });

  await page.goto(await create('order-1043'));
  await page.getByLabel('Card number').fill(TEST_CARDS.threeDs);
  await page.getByLabel('Expiry date').fill('12/30');
  await page.getByLabel('CVV').fill('123');
  await page.getByLabel('Cardholder name').fill('Ada Lovelace');
  await Promise.all([page.waitForURL(/\/3ds$/), page.getByRole('button', { name: /^Pay \d/ }).click()]);
  await page.screenshot({ path: `${out}3ds.png`, fullPage: true });
  console.log(`wrote ${out}checkout.png and ${out}3ds.png`);
  await inspectorScreenshot(browser);
} finally {
  await browser.close();
  await server.close();
}
