import { describe, expect, it } from 'vitest';
import { maskNotification } from './mask.js';

describe('maskNotification', () => {
  it('shows the ends and the length of a card token, never the whole', () => {
    const token = 'a'.repeat(4) + 'b'.repeat(56) + 'c'.repeat(4);
    expect(maskNotification({ cc_token: token, cc_mask: '444455******1111' })).toEqual({
      cc_token: 'aaaa…cccc (64 chars)',
      cc_mask: '444455******1111',
    });
  });

  it('hides short tokens, CVVs and non-string values entirely and masks card numbers to 6+4', () => {
    expect(
      maskNotification({
        cc_token: 'short',
        card_cvv: '123',
        nested: { cc_cvv: 123, cc_token: { odd: true } },
        cc_number: '4444555566661111',
        list: [{ cc_token: 'x'.repeat(20) }],
      }),
    ).toEqual({
      cc_token: '****',
      card_cvv: '****',
      nested: { cc_cvv: '****', cc_token: '****' },
      cc_number: '444455******1111',
      list: [{ cc_token: 'xxxx…xxxx (20 chars)' }],
    });
  });

  it('masks card data whatever the case of its name, at any depth, and card numbers in any value', () => {
    expect(
      maskNotification({
        CC_NUMBER: '4444555566661111',
        Cc_Token: 'tok_1a2b3c4d5e6f7a8b',
        card: { cvv: '123', cardNumber: '4111111111111112', cc_holder: 'JO CUSTOMER' },
        details: { PAN: '5555555555554444', cvc: 321 },
        description: 'paid with 4111 1111 1111 1111, order 1234567812345678',
        ref: 4111111111111111,
      }),
    ).toEqual({
      CC_NUMBER: '444455******1111',
      Cc_Token: 'tok_…7a8b (20 chars)',
      card: '****',
      details: { PAN: '****', cvc: '****' },
      description: 'paid with 411111******1111, order 1234567812345678',
      ref: '411111******1111',
    });
  });
});
