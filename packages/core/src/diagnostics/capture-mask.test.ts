import { describe, expect, it } from 'vitest';
import { signedData } from '../../../../test/support/signed-form.js';
import { formBody, post, purchase, SECRET } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';
import { encodeBase64Url } from '../runtime/bytes.js';
import { type CapturedDelivery, createCapture } from './capture.js';
import { maskCardNumbers } from './capture-mask.js';

/** The line captured for one delivery of `sent` (signed with `secret`), as text and parsed. */
async function captureOf(
  sent: Record<string, unknown>,
  options: {
    mask?: readonly string[];
    secret?: string;
    headers?: Record<string, string>;
    body?: string;
  } = {},
): Promise<{ text: string; line: CapturedDelivery }> {
  const texts: string[] = [];
  const capture = createCapture({
    write: (text) => void texts.push(text),
    ...(options.mask ? { mask: options.mask } : {}),
  });
  const webhook = createWebhookHandler({ secret: SECRET, capture, logger: false, handle: () => {} });
  const body = options.body ?? formBody(sent, options.secret ?? SECRET);
  await webhook(post(body, options.headers), undefined);
  await capture.flush();
  expect(texts).toHaveLength(1);
  return { text: texts[0]!, line: JSON.parse(texts[0]!) as CapturedDelivery };
}

// Not Luhn numbers: each case shows the name rule alone.
const NOT_LUHN = '4111111111111112';

describe('createCapture: masking by name, whatever its case and separators', () => {
  it.each([
    ['CC_NUMBER', NOT_LUHN],
    ['Cc_Token', 'tok_1a2b3c4d5e6f'],
    ['Card_CVV', '123'],
    ['customer-email', 'jo@example.com'],
    ['cryptogram', { onlinePaymentCryptogram: 'AgAAAAAAAIR8CQrXcIhbQAAAAAA=', eciIndicator: '05' }],
    ['browser_fingerprint', { browserIpAddress: '203.0.113.7', browserUserAgent: 'Mozilla/5.0' }],
    ['customer_referrer', 'https://forum.example/u/jo-customer'],
    ['customer_lang', 'uk'],
  ])('masks %s at the top of the notification', async (name, value) => {
    const { text, line } = await captureOf(purchase({ [name]: value }));
    expect(line.notification![name]).toBe('[masked]');
    expect(text).not.toContain(JSON.stringify(value));
  });

  it.each(['cvv', 'cvc', 'pan', 'cardNumber', 'cc_holder', 'CARD-NUMBER', 'card_number'])(
    'masks the card-like name %s at any depth, with the default list or without it',
    async (name) => {
      const sent = purchase({ order_info: { items: [{ [name]: NOT_LUHN, sku: 'sku-1' }] } });
      for (const mask of [undefined, ['description']]) {
        const { line } = await captureOf(sent, mask ? { mask } : {});
        expect(line.notification!.order_info).toEqual({ items: [{ [name]: '[masked]', sku: 'sku-1' }] });
      }
    },
  );

  it('masks a card object as a whole: card.{cvv, cvc, pan, cardNumber, cc_holder}', async () => {
    const card = { cvv: '123', cvc: '321', pan: NOT_LUHN, cardNumber: NOT_LUHN, cc_holder: 'JO CUSTOMER' };
    const { text, line } = await captureOf(purchase({ card }));
    expect(line.notification!.card).toBe('[masked]');
    expect(text).not.toContain('JO CUSTOMER');
    expect(text).not.toContain(NOT_LUHN);
  });

  it('compares the names given in mask without case or separators', async () => {
    const { line } = await captureOf(purchase({ payload: 'p-1', Description: 'gift' }), {
      mask: ['PAYLOAD', 'des-cription'],
    });
    expect(line.notification).toMatchObject({ payload: '[masked]', Description: '[masked]' });
  });
});

describe('createCapture: customer and card details under names the spec does not list', () => {
  it.each([
    ['customer', { email: 'jo@example.com', phone: '+380501234567', name: 'Jo Doe' }],
    ['customer_name', 'Jo Doe'],
    ['customerAddress', '1 Main St'],
    ['payer_email', 'jo@example.com'],
    ['payerPhone', '+380501234567'],
    ['email', 'jo@example.com'],
    ['phone', '+380501234567'],
  ])('masks %s by default (customer_* and payer_* as the README says)', async (name, value) => {
    const { text, line } = await captureOf(purchase({ [name]: value }));
    expect(line.notification![name]).toBe('[masked]');
    expect(text).not.toContain('jo@example.com');
    expect(text).not.toContain('Jo Doe');
    expect(text).not.toContain('+380501234567');
  });

  it.each([
    ['security_code', '737'],
    ['expiry', '12/31'],
    ['card', { expiry: '12/31', security_code: '737' }],
    ['expiry_date', '2031-12'],
  ])('masks %s whatever mask says: it is card data', async (name, value) => {
    const { text, line } = await captureOf(purchase({ [name]: value }), { mask: [] });
    expect(line.notification![name]).toBe('[masked]');
    expect(text).not.toContain('737');
    expect(text).not.toContain('12/31');
  });

  it('keeps a field a mask list without the customer_* entry names', async () => {
    const { line } = await captureOf(purchase({ customer_name: 'Jo Doe' }), { mask: ['cc_token'] });
    expect(line.notification!.customer_name).toBe('Jo Doe');
  });
});

describe('createCapture: masking card numbers wherever they appear', () => {
  it('masks a Luhn number in a free-text field, keeping the text around it', async () => {
    const { text, line } = await captureOf(
      purchase({ description: 'paid with 5555 5555 5555 4444 by phone, order 1234567812345678' }),
    );
    expect(line.notification!.description).toBe('paid with [masked] by phone, order 1234567812345678');
    expect(text).not.toContain('5555 5555 5555 4444');
  });

  it('masks a card number inside the payload string, and card-like names in JSON text inside it', async () => {
    const payload = JSON.stringify({ basket: 'b-7', note: 'card 4111111111111111', cvv: '123' });
    const { text, line } = await captureOf(purchase({ payload, extra: 'x 4111-1111-1111-1111 y' }));
    expect(JSON.parse(line.notification!.payload as string)).toEqual({
      basket: 'b-7',
      note: 'card [masked]',
      cvv: '[masked]',
    });
    expect(line.notification!.extra).toBe('x [masked] y');
    expect(text).not.toContain('4111');
  });

  it('keeps JSON text inside a string as it was spelt when nothing in it is masked', async () => {
    const payload = '{ "basket": "b-7",  "n": 2 }';
    const { line } = await captureOf(purchase({ payload }));
    expect(line.notification!.payload).toBe(payload);
  });

  it('masks a Luhn number given as a JSON number', async () => {
    const { line } = await captureOf(purchase({ ref: 4111111111111111, count: 1234567812345678 }));
    expect(line.notification).toMatchObject({ ref: '[masked]', count: 1234567812345678 });
  });

  it('masks a Luhn-valid 19-digit card number sent as a JSON number, whose digits JSON.parse cannot keep', async () => {
    const pan = '6221261234567890129';
    const text = JSON.stringify(purchase({ ref: '@PAN@' })).replace('"@PAN@"', pan);
    const body = signedData(encodeBase64Url(text), SECRET);
    const { text: line } = await captureOf({}, { body });
    expect(JSON.parse(line).notification.ref).toBe('[masked]');
    expect(line).not.toContain('6221261234');
  });

  it.each([
    ['dots', '4111.1111.1111.1111'],
    ['no-break spaces', '4111\u00a01111\u00a01111\u00a01111'],
    ['narrow no-break spaces', '4111\u202f1111\u202f1111\u202f1111'],
    [
      'full-width digits',
      '\uff14\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11',
    ],
  ])('masks a card number written with %s', async (_how, number) => {
    const { text, line } = await captureOf(purchase({ description: `paid with ${number} today` }));
    expect(line.notification!.description).toBe('paid with [masked] today');
    expect(text).not.toContain(number);
  });

  it("masks a card number in an unverified sender's media type", async () => {
    const { text, line } = await captureOf(purchase(), {
      secret: 'another-secret',
      headers: { 'content-type': 'application/x-4111111111111111; charset=utf-8' },
    });
    expect(line).toMatchObject({ status: 415, contentType: 'application/x-[masked]' });
    expect(text).not.toContain('4111');
  });

  it.each([
    ['4111111111111111', '[masked]'],
    ['371449635398431', '[masked]'],
    ['6011 0009 9013 9424', '[masked]'],
    ['4111111111111112', '4111111111111112'],
    ['411111111111', '411111111111'],
    // 20 digits is no card number, though a 16-digit run inside it passes the check.
    ['41111111111111110000', '41111111111111110000'],
  ])('maskCardNumbers(%j) is %j', (text, masked) => {
    expect(maskCardNumbers(text)).toBe(masked);
  });
});
