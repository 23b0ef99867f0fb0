// Screenshots of the fake service's hosted checkout and 3DS page for the testing README (docs/images/), taken in
// Debian's Chromium from the sources: `pnpm screenshots`. Not a test: it asserts nothing, it shows.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startFakeServer, TEST_CARDS } from '../packages/testing/src/index.js';
import { launchChromium } from '../packages/testing/test/chromium.js';

const out = fileURLToPath(new URL('../docs/images/', import.meta.url));
mkdirSync(out, { recursive: true });

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
} finally {
  await browser.close();
  await server.close();
}
