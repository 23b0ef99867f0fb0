import { createWebhookHandler, decodeData, verifySignature } from '@payhook/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fakePurchase } from './index.js';
import { signWebhook } from './sign.js';

const secret = fc.string({ minLength: 1, maxLength: 64, unit: 'binary' });
const wire = fc.dictionary(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 8 });

describe('signWebhook properties', () => {
  it('any JSON object under any secret verifies with core and decodes to itself', () => {
    fc.assert(
      fc.property(wire, secret, (object, key) => {
        const signed = signWebhook(object, key);
        expect(verifySignature(signed.data, signed.signature, key)).toEqual({
          valid: true,
          index: 0,
          id: undefined,
        });
        expect(decodeData(signed.data)).toEqual(JSON.parse(JSON.stringify(object)));
        expect(signed.signature).toHaveLength(44);
      }),
      { numRuns: 200 },
    );
  });

  it('core handles every accepted variant of any notification under any secret, and refuses the forged ones', async () => {
    await fc.assert(
      fc.asyncProperty(
        secret,
        fc.string({ maxLength: 200, unit: 'binary' }),
        fc.constantFrom(
          'exact',
          'unpadded',
          'standardBase64',
          'extraFields',
          'json',
          'tampered',
          'wrongSecret',
        ),
        async (key, payload, variant) => {
          const webhook = createWebhookHandler({ secret: key, logger: false, handle: () => undefined });
          const signed = signWebhook(fakePurchase({ payload }), key, { variant });
          const result = await webhook(
            { method: 'POST', headers: signed.headers, body: signed.body },
            undefined,
          );
          const forged = variant === 'tampered' || variant === 'wrongSecret';
          expect(result.status).toBe(forged ? 401 : 200);
          expect(result.outcome).toBe(forged ? 'refused' : 'handled');
        },
      ),
      { numRuns: 150 },
    );
  });
});
