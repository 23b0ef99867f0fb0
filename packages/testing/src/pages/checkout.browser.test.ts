import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webhookMiddleware } from '@payhook/express';
import express from 'express';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canRunChromium, launchChromium } from '../../test/chromium.js';
import { TEST_CARDS, THREE_DS_CODE } from '../fake/outcomes.js';
import { type FakeServer, startFakeServer } from '../server.js';

const SECRET = `checkout-browser-${process.pid}`;

interface Merchant {
  url: string;
  server: Server;
  /** Every notification the merchant's real handler verified and handled, in order. */
  handled: Array<{ order_id: string; status: string; status_code: string | undefined; payway?: string }>;
}

async function startMerchant(): Promise<Merchant> {
  const handled: Merchant['handled'] = [];
  const app = express();
  app.use(
    '/webhooks',
    webhookMiddleware({ secret: SECRET, logger: false }).on('purchase', (n) => {
      handled.push({
        order_id: n.order_id,
        status: n.status,
        status_code: n.status_code,
        ...(typeof n.payway === 'string' ? { payway: n.payway } : {}),
      });
    }),
  );
  app.get('/thanks', (req, res) => {
    res
      .type('html')
      .send(
        `<!doctype html><title>Thanks</title><link rel="icon" href="data:,"><h1>Thank you for order ${String(req.query.order).replace(/[^\w-]/g, '')}</h1>`,
      );
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, handled };
}

describe.skipIf(!canRunChromium)('the hosted checkout in Chromium, driven as a customer would', () => {
  let server: FakeServer;
  let merchant: Merchant;
  let browser: Browser;

  beforeAll(async () => {
    merchant = await startMerchant();
    server = await startFakeServer({
      secret: SECRET,
      seed: process.pid,
      now: '2026-05-05T12:00:00Z',
      merchantName: 'Teapots & Co',
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await new Promise((resolve) => merchant?.server.close(resolve));
  });

  /** Creates a hosted payment of 349.50 UAH as the merchant's server would, and answers the 303's Location. */
  async function createHosted(orderId: string, extra: Record<string, unknown> = {}): Promise<string> {
    const response = await fetch(`${server.url}/api/v1/payment`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': `SVC ${server.fake.project.apiKey}:${SECRET}`,
        'x-api-key': server.fake.project.endpointsKey,
      },
      body: JSON.stringify({
        pos_id: server.fake.project.posId,
        mode: 'hosted',
        method: 'purchase',
        amount: 349.5,
        currency: 'UAH',
        description: 'Teapot <b>"cast iron"</b> & two cups',
        order_id: orderId,
        server_url: `${merchant.url}/webhooks`,
        result_url: `${merchant.url}/thanks?order=${orderId}`,
        ...extra,
      }),
    });
    expect(response.status).toBe(303);
    return response.headers.get('location')!;
  }

  /** A page that records every request it makes, to show none leaves the fake's origin but the redirect. */
  async function openPage(location: string): Promise<{ page: Page; requests: string[] }> {
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(location);
    return { page, requests };
  }

  function offOrigin(requests: readonly string[]): string[] {
    return requests.filter((url) => new URL(url).origin !== server.url);
  }

  async function typeCard(page: Page, number: string): Promise<void> {
    await page.getByLabel('Card number').fill(number);
    await page.getByLabel('Expiry date').fill('12/30');
    await page.getByLabel('CVV').fill('123');
    await page.getByLabel('Cardholder name').fill('Ada Lovelace');
  }

  /** Types the 3DS test card and pays: the browser lands on the challenge page beside the checkout. */
  async function payToChallenge(page: Page, location: string): Promise<void> {
    await typeCard(page, TEST_CARDS.threeDs);
    await Promise.all([
      page.waitForURL(location.replace(/\/form$/, '/3ds')),
      page.getByRole('button', { name: 'Pay 349.50 UAH' }).click(),
    ]);
  }

  async function handledFor(orderId: string) {
    await server.fake.idle();
    return merchant.handled.filter((n) => n.order_id === orderId);
  }

  it('pays by a typed test card: the order shown, the success webhook verified, then result_url', async () => {
    const location = await createHosted('card-1');
    const { page, requests } = await openPage(location);
    await expect(page.title()).resolves.toBe('Pay 349.50 UAH to Teapots & Co');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('349.50 UAH');
    expect(await page.locator('#merchant').textContent()).toBe('Teapots & Co');
    // The description is text, never markup.
    expect(await page.locator('#description').textContent()).toBe('Teapot <b>"cast iron"</b> & two cups');
    expect(await page.locator('#description b').count()).toBe(0);
    await typeCard(page, '4242 4242 4242 4242');
    await Promise.all([
      page.waitForURL(`${merchant.url}/thanks?order=card-1`),
      page.getByRole('button', { name: 'Pay 349.50 UAH' }).click(),
    ]);
    expect(await page.getByRole('heading').textContent()).toBe('Thank you for order card-1');
    expect(await handledFor('card-1')).toEqual([
      { order_id: 'card-1', status: 'success', status_code: '1000' },
    ]);
    expect(server.fake.paymentByOrder('card-1')!.record.cc_mask).toBe('424242******4242');
    expect(offOrigin(requests)).toEqual([`${merchant.url}/thanks?order=card-1`]);
    await page.close();
  });

  it('shows the card checks inline (Luhn, expiry past, CVV digits, name) and posts nothing until they pass', async () => {
    const location = await createHosted('checks-1');
    const { page, requests } = await openPage(location);
    await page.getByLabel('Card number').fill('4242 4242 4242 4241');
    await page.getByLabel('Expiry date').fill('04/26');
    await page.getByLabel('CVV').fill('12a');
    await page.getByRole('button', { name: 'Pay 349.50 UAH' }).click();
    const errors = await page.locator('.error').allTextContents();
    expect(errors).toEqual([
      'This card number is not valid.',
      'This card has expired.',
      'The CVV is 3 or 4 digits.',
      'Enter the name on the card.',
    ]);
    await expect(page.getByLabel('Card number').getAttribute('aria-invalid')).resolves.toBe('true');
    expect(requests.filter((url) => url === location)).toHaveLength(1);
    expect(server.fake.paymentByOrder('checks-1')!.record.status).toBe('init');
    // Corrected in place, the same form pays.
    await typeCard(page, TEST_CARDS.success);
    await Promise.all([
      page.waitForURL(`${merchant.url}/thanks?order=checks-1`),
      page.getByRole('button', { name: 'Pay 349.50 UAH' }).click(),
    ]);
    expect(await handledFor('checks-1')).toEqual([
      { order_id: 'checks-1', status: 'success', status_code: '1000' },
    ]);
    await page.close();
  });

  it('passes a 3-D Secure challenge with THREE_DS_CODE: pending 2122, then success, then result_url', async () => {
    const location = await createHosted('3ds-pass');
    const { page, requests } = await openPage(location);
    await payToChallenge(page, location);
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('Confirm it is you');
    expect(await page.locator('#amount').textContent()).toBe('349.50 UAH');
    await page.getByLabel('Verification code').fill(THREE_DS_CODE);
    await Promise.all([
      page.waitForURL(`${merchant.url}/thanks?order=3ds-pass`),
      page.getByRole('button', { name: 'Confirm' }).click(),
    ]);
    expect(await handledFor('3ds-pass')).toEqual([
      { order_id: '3ds-pass', status: 'pending', status_code: '2122' },
      { order_id: '3ds-pass', status: 'success', status_code: '1000' },
    ]);
    expect(server.fake.paymentByOrder('3ds-pass')!.record.eci).toBe('05');
    expect(offOrigin(requests)).toEqual([`${merchant.url}/thanks?order=3ds-pass`]);
    await page.close();
  });

  it('fails a 3-D Secure challenge with any other code: failure 2123, then result_url', async () => {
    const location = await createHosted('3ds-fail');
    const { page, requests } = await openPage(location);
    await payToChallenge(page, location);
    await page.getByLabel('Verification code').fill('000000');
    await Promise.all([
      page.waitForURL(`${merchant.url}/thanks?order=3ds-fail`),
      page.getByRole('button', { name: 'Confirm' }).click(),
    ]);
    expect(await handledFor('3ds-fail')).toEqual([
      { order_id: '3ds-fail', status: 'pending', status_code: '2122' },
      { order_id: '3ds-fail', status: 'failure', status_code: '2123' },
    ]);
    expect(offOrigin(requests)).toEqual([`${merchant.url}/thanks?order=3ds-fail`]);
    await page.close();
  });

  it.each([
    ['Apple Pay', 'apple_pay'],
    ['Google Pay', 'google_pay'],
  ])(
    'pays with the %s button: a success webhook naming the wallet, then result_url',
    async (name, payway) => {
      const orderId = `wallet-${payway}`;
      const location = await createHosted(orderId);
      const { page, requests } = await openPage(location);
      await Promise.all([
        page.waitForURL(`${merchant.url}/thanks?order=${orderId}`),
        page.getByRole('button', { name: `Pay with ${name}` }).click(),
      ]);
      expect(await handledFor(orderId)).toEqual([
        { order_id: orderId, status: 'success', status_code: '1000', payway },
      ]);
      expect(offOrigin(requests)).toEqual([`${merchant.url}/thanks?order=${orderId}`]);
      await page.close();
    },
  );

  it('lets order_timeout pass on the test clock: the failure webhook, the expiry page, the way back to result_url', async () => {
    const location = await createHosted('timeout-1', { order_timeout: 900 });
    const { page, requests } = await openPage(location);
    expect(await page.locator('dd', { hasText: 'UTC' }).textContent()).toBe('2026-05-05 12:15 UTC');
    await typeCard(page, TEST_CARDS.success);
    // The customer walks away; the test moves the fake's clock (the admin route), not the wall clock.
    const moved = await fetch(`${server.url}/__payhook/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': server.fake.project.endpointsKey },
      body: JSON.stringify({ advanceBy: 900_000 }),
    });
    expect(moved.status).toBe(200);
    expect(await handledFor('timeout-1')).toEqual([
      { order_id: 'timeout-1', status: 'failure', status_code: '2124' },
    ]);
    const [answer] = await Promise.all([
      page.waitForResponse(
        (response) => response.url() === location && response.request().method() === 'POST',
      ),
      page.getByRole('button', { name: 'Pay 349.50 UAH' }).click(),
    ]);
    expect(answer.status()).toBe(410);
    expect(await page.getByRole('heading', { level: 2 }).textContent()).toBe('This payment has expired');
    await Promise.all([
      page.waitForURL(`${merchant.url}/thanks?order=timeout-1`),
      page.getByRole('link', { name: 'Return to Teapots & Co' }).click(),
    ]);
    expect(await handledFor('timeout-1')).toHaveLength(1);
    expect(offOrigin(requests)).toEqual([`${merchant.url}/thanks?order=timeout-1`]);
    await page.close();
  });
});
