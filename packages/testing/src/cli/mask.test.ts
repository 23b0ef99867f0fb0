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
});
