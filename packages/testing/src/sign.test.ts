import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWebhookHandler, decodeData, type SignatureAlgorithm, type WebhookResult } from '@payhook/core';
import { describe, expect, it } from 'vitest';
import { fakePurchase, fakeRefund } from './index.js';
import { EXTRA_FIELD, SIGN_VARIANTS, type SignVariant, signWebhook } from './sign.js';

const SECRET = 'test-secret';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The spec's formula without payhook: openssl when present, else Node's hash with a hand-written base64url. */
function independentSignature(secret: string, data: string, algorithm: SignatureAlgorithm): string {
  let digest: Buffer;
  if (hasOpenssl()) {
    digest = execFileSync('openssl', ['dgst', `-${algorithm}`, '-binary'], { input: secret + data + secret });
  } else {
    digest = createHash(algorithm)
      .update(secret + data + secret)
      .digest();
  }
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let out = '';
  for (let i = 0; i < digest.length; i += 3) {
    const n = (digest[i]! << 16) | ((digest[i + 1] ?? 0) << 8) | (digest[i + 2] ?? 0);
    const chars = [18, 12, 6, 0].map((shift) => alphabet[(n >> shift) & 63]!);
    const kept = digest.length - i >= 3 ? 4 : digest.length - i + 1;
    out += chars.slice(0, kept).join('') + '='.repeat(4 - kept);
  }
  return out;
}

async function answer(variant: SignVariant, algorithm?: SignatureAlgorithm): Promise<WebhookResult> {
  const webhook = createWebhookHandler({ secret: SECRET, algorithm, logger: false, handle: () => undefined });
  const signed = signWebhook(fakePurchase(), SECRET, { variant });
  return webhook({ method: 'POST', headers: signed.headers, body: signed.body }, undefined);
}

describe('signWebhook', () => {
  it('agrees with an independent computation of the spec formula (sha256, 44 characters)', () => {
    const signed = signWebhook(fakePurchase({}, { seed: 9 }), SECRET);
    expect(signed.signature).toHaveLength(44);
    expect(signed.signature).toBe(independentSignature(SECRET, signed.data, 'sha256'));
  });

  it('agrees with an independent computation under sha1 (28 characters)', () => {
    const signed = signWebhook(fakeRefund({}, { seed: 9 }), 'another secret', { algorithm: 'sha1' });
    expect(signed.signature).toHaveLength(28);
    expect(signed.signature).toBe(independentSignature('another secret', signed.data, 'sha1'));
  });

  it('reproduces the public SHA-1 vector', () => {
    const signed = signWebhook({ name: 'Joe', age: 20 }, 'changeme', { variant: 'sha1' });
    expect(signed.data).toBe('eyJuYW1lIjoiSm9lIiwiYWdlIjoyMH0=');
    expect(signed.signature).toBe('Bcj3hb-h00HrEMIoJ5nPW5ZHlVQ=');
  });

  it('builds an urlencoded form of data and signature', () => {
    const signed = signWebhook(fakePurchase(), SECRET);
    expect(signed.headers).toEqual({ 'content-type': 'application/x-www-form-urlencoded' });
    const form = new URLSearchParams(signed.body);
    expect([...form.keys()]).toEqual(['data', 'signature']);
    expect(form.get('data')).toBe(signed.data);
    expect(form.get('signature')).toBe(signed.signature);
  });

  it('is deterministic: the same notification gives the same body', () => {
    const purchase = fakePurchase();
    expect(signWebhook(purchase, SECRET).body).toBe(signWebhook(structuredClone(purchase), SECRET).body);
  });

  it('shapes each variant as described', () => {
    expect(signWebhook(fakePurchase(), SECRET, { variant: 'unpadded' }).signature).toHaveLength(43);
    const standard = signWebhook(fakePurchase({ payload: '???>>>' }), SECRET, { variant: 'standardBase64' });
    expect(standard.data).toMatch(/[+/]/);
    const extra = signWebhook(fakePurchase(), SECRET, { variant: 'extraFields' });
    expect(decodeData(extra.data)).toHaveProperty(EXTRA_FIELD);
    expect([...new URLSearchParams(extra.body).keys()]).toEqual([
      EXTRA_FIELD,
      'data',
      'signature',
      'callback',
    ]);
    const json = signWebhook(fakePurchase(), SECRET, { variant: 'json' });
    expect(JSON.parse(json.body)).toEqual({ data: json.data, signature: json.signature });
    expect(json.headers).toEqual({ 'content-type': 'application/json' });
    const tampered = signWebhook(fakePurchase({ amount: 10 }), SECRET, { variant: 'tampered' });
    expect(decodeData(tampered.data).amount).toBe(1010);
  });

  it('signs the raw object of a parsed notification, not its parsed form', async () => {
    const purchase = fakePurchase();
    const { parseNotification } = await import('@payhook/core');
    expect(signWebhook(parseNotification(purchase), SECRET).body).toBe(signWebhook(purchase, SECRET).body);
  });

  it('refuses an unknown variant with a TypeError', () => {
    expect(() => signWebhook(fakePurchase(), SECRET, { variant: 'nope' as SignVariant })).toThrow(
      /unknown variant "nope"/,
    );
  });
});

/** The README's table: how core answers each variant, by default and with a receiver configured for sha1. */
const ANSWERS: Record<SignVariant, { byDefault: 200 | 401; sha1Receiver: 200 | 401 }> = {
  exact: { byDefault: 200, sha1Receiver: 401 },
  unpadded: { byDefault: 200, sha1Receiver: 401 },
  standardBase64: { byDefault: 200, sha1Receiver: 401 },
  extraFields: { byDefault: 200, sha1Receiver: 401 },
  json: { byDefault: 200, sha1Receiver: 401 },
  sha1: { byDefault: 401, sha1Receiver: 200 },
  tampered: { byDefault: 401, sha1Receiver: 401 },
  wrongSecret: { byDefault: 401, sha1Receiver: 401 },
};

describe("core's handler answers every variant as a receiver must", () => {
  it.each(SIGN_VARIANTS)('%s', async (variant) => {
    const expected = ANSWERS[variant];
    for (const [algorithm, status] of [
      [undefined, expected.byDefault],
      ['sha1', expected.sha1Receiver],
    ] as const) {
      const result = await answer(variant, algorithm);
      expect([algorithm, result.status]).toEqual([algorithm, status]);
      expect(JSON.parse(result.body)).toEqual(
        status === 200
          ? { ok: true, outcome: 'handled' }
          : { ok: false, error: expect.objectContaining({ code: 'signature.invalid' }) },
      );
    }
  });
});
