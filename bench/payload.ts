import { createHash, createHmac, randomBytes } from 'node:crypto';

/** The project secret every row verifies with (the service's SECRET_KEY). */
export const SECRET = 'bench-secret-5c1f9d2e7a4b';

/** The fixed part of the notification: every field of a purchase webhook (spec 2.1, 6.1) with realistic values. */
const FIELDS = {
  order_id: 'order-2026-11-22-000187',
  gateway_order_id: '7712440391',
  billing_order_id: '1093847562',
  transaction_id: '0c1b2a39-4d5e-4f60-8172-9a8b7c6d5e4f',
  pos_id: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e',
  mode: 'direct',
  method: 'purchase',
  amount: 1499.5,
  currency: 'UAH',
  description: 'Order 187: annual plan, 2 seats, invoice INV-2026-0187',
  status: 'success',
  status_code: '1000',
  status_description: 'Transaction is successful',
  user_action_required: false,
  eci: '05',
  mcc: '5734',
  payway: 'card',
  cc_mask: '444455******1111',
  cc_token: 'a7f3c9e1b5d24f8a9c0e7b3d1f5a8c2e',
  cc_token_expiration: '2029-11-30T23:59:59',
  customer_id: 'cust-48213',
  customer_ip: '203.0.113.42',
  customer_email: 'olena.shevchenko@example.com',
  customer_phone: '+380501234567',
  customer_country: 'UA',
  created_at: '2026-11-22T10:15:00',
  processed_at: '2026-11-22T10:15:03.120',
  fee: { amount: 29.99, currency: 'UAH' },
  fixed_fee: { amount: 5, currency: 'UAH' },
  percent_fee: { amount: 24.99, currency: 'UAH' },
  payload: 'plan=annual;seats=2;campaign=autumn-2026;ref=newsletter',
  receipt_url: 'https://pay.example.com/public/receipt/3f9e1c7a5b2d4e6f8a0c1e3b5d7f9a1c',
};

/** `{"payment_id":"` is 15 bytes and a UUID 36: both multiples of 3, so their base64 pieces concatenate. */
const HEAD = '{"payment_id":"';
const TAIL = `",${JSON.stringify(FIELDS).slice(1)}`;
const HEAD_B64 = toUrl(Buffer.from(HEAD).toString('base64'));
const TAIL_B64 = toUrl(Buffer.from(TAIL).toString('base64'));

function toUrl(base64: string): string {
  return base64.replace(/\+/g, '-').replace(/\//g, '_');
}

/** The notification JSON for one payment id (the same ~1.2 KB shape for every row). */
export function notificationJson(paymentId: string): string {
  return HEAD + paymentId + TAIL;
}

/** `data` for a payment id: base64url of the notification JSON, padding kept as the service sends it. */
export function encodeData(paymentId: string): string {
  return HEAD_B64 + toUrl(Buffer.from(paymentId).toString('base64')) + TAIL_B64;
}

/** The spec's signature (part 5), computed with node:crypto only, independently of payhook. */
export function signData(data: string, secret: string = SECRET): string {
  return toUrl(createHash('sha256').update(secret).update(data).update(secret).digest('base64'));
}

/** The urlencoded body the service posts; `=` is escaped as any form encoder does. */
export function formBody(data: string, signature: string): string {
  return `data=${data.replace(/=/g, '%3D')}&signature=${signature.replace(/=/g, '%3D')}`;
}

/**
 * Unique payment ids: a random prefix per generator (so two servers or rounds never share one) and a counter,
 * formatted as a UUID.
 */
export function createIdSource(): () => string {
  const prefix = randomBytes(6).toString('hex');
  let counter = 0;
  return () => {
    const n = (counter++).toString(16).padStart(12, '0');
    return `${prefix.slice(0, 8)}-${prefix.slice(8, 12)}-4${n.slice(0, 3)}-8${n.slice(3, 6)}-${n.slice(6, 12)}000000`;
  };
}

/** A signed delivery with a fresh payment id each call, so duplicate detection never short-circuits a row. */
export function createDeliverySource(secret: string = SECRET): () => { data: string; signature: string } {
  const nextId = createIdSource();
  return () => {
    const data = encodeData(nextId());
    return { data, signature: signData(data, secret) };
  };
}

/** The GitHub-style body for the @octokit/webhooks row: the notification JSON padded to `bytes`. */
export function octokitBody(paymentId: string, bytes: number): string {
  const json = notificationJson(paymentId);
  const filler = bytes - json.length - ',"padding":""'.length;
  return `${json.slice(0, -1)},"padding":"${'x'.repeat(Math.max(0, filler))}"}`;
}

/** GitHub's `X-Hub-Signature-256` for a body. */
export function signOctokit(body: string, secret: string = SECRET): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Bodies of one size for the size-limit rows: an ordinary signed delivery, it wrongly signed, and the worst shape. */
export interface LimitBodies {
  /** The notification with a `padding` field long enough, signed: handled. */
  plain: Buffer;
  /** The same body with a signature of the right size that does not match: refused with 401. */
  refused: Buffer;
  /**
   * The costliest shape found for its size: `data` of `+` only, which form decoding turns into spaces, hashed once
   * as received and once more with the spaces turned back into `+` (as a sender that did not escape `+` needs).
   */
  worst: Buffer;
}

/** `LimitBodies` of the largest size up to `size` bytes that the plain delivery reaches exactly. */
export function limitBodies(size: number): LimitBodies {
  const notification = JSON.parse(notificationJson(createIdSource()())) as Record<string, unknown>;
  const bodyFor = (padding: number, signature?: string) => {
    const data = toUrl(
      Buffer.from(JSON.stringify({ ...notification, padding: 'x'.repeat(padding) })).toString('base64'),
    );
    return formBody(data, signature ?? signData(data));
  };
  // Four base64 characters per three JSON bytes: start near the size and step down to the first body that fits.
  let padding = Math.floor(((size - bodyFor(0).length) * 3) / 4);
  while (bodyFor(padding).length > size) padding--;
  const plain = bodyFor(padding);
  const prefix = `signature=${'A'.repeat(43)}%3D&data=`;
  return {
    plain: Buffer.from(plain),
    refused: Buffer.from(bodyFor(padding, `${'A'.repeat(43)}=`)),
    worst: Buffer.from(prefix + '+'.repeat(plain.length - prefix.length)),
  };
}
