import { describe, expect, it } from 'vitest';
import { formatAmount } from './amount.js';
import { renderCheckoutPage } from './checkout.js';
import { renderExpiredPage } from './expired.js';
import { escapeHtml, renderMessagePage } from './layout.js';
import { renderReceiptPage } from './receipt.js';
import { renderThreeDsPage } from './three-ds.js';

const hostile = {
  merchant: `Tea "&" <Co>`,
  description: `<script>alert('x')</script>&`,
  orderId: '<o>',
  amount: 349.5,
  currency: 'UAH',
};

describe('checkout pages', () => {
  it('formats the amount with every minor digit of its currency', () => {
    expect(formatAmount(349.5, 'UAH')).toBe('349.50 UAH');
    expect(formatAmount(30000, 'UAH')).toBe('30,000.00 UAH');
    expect(formatAmount(1500, 'JPY')).toBe('1,500 JPY');
    expect(formatAmount(1.5, 'KWD')).toBe('1.500 KWD');
    expect(formatAmount('12', 'XTS')).toBe('12 XTS');
  });

  it('escapes every value the checkout shows, and keeps the CVV out of a re-rendered form', () => {
    const html = renderCheckoutPage({
      order: hostile,
      month: '2026-05',
      values: { cc_number: '"><b>', exp: '12/30', cvv: '999', cardholder: 'A & B' },
      errors: { cc_number: 'This card number is not valid.' },
    });
    expect(html).toContain('<p id="description">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</p>');
    expect(html).toContain('<title>Pay 349.50 UAH to Tea &quot;&amp;&quot; &lt;Co&gt;</title>');
    expect(html).toContain('<dd id="order">&lt;o&gt;</dd>');
    expect(html).toContain('value="&quot;&gt;&lt;b&gt;"');
    expect(html).toContain('value="A &amp; B"');
    expect(html).not.toContain('999');
    expect(html).not.toContain('<script>alert');
    expect(html).toContain(
      '<p class="error" id="cc_number-error" aria-live="polite">This card number is not valid.</p>',
    );
    expect(html).toContain('aria-describedby="cc_number-error" aria-invalid="true"');
  });

  it('shows the test shortcuts only when asked', () => {
    const order = { ...hostile, merchant: 'Shop' };
    const buttons = /<button type="submit" name="action" value="(pay|decline|fail_3ds)"/g;
    expect(renderCheckoutPage({ order, month: '2026-05' }).match(buttons)).toBeNull();
    expect(renderCheckoutPage({ order, month: '2026-05', shortcuts: true }).match(buttons)).toHaveLength(3);
    expect(
      renderThreeDsPage({ order, cardMask: undefined, code: '1', shortcuts: true }).match(buttons),
    ).toHaveLength(2);
  });

  it('loads nothing from elsewhere: inline style and script, an empty icon', () => {
    const pages = [
      renderCheckoutPage({ order: hostile, month: '2026-05' }),
      renderThreeDsPage({ order: hostile, cardMask: '424242******4242', code: '123456' }),
      renderExpiredPage({ order: hostile, returnUrl: undefined }),
    ];
    for (const html of pages) {
      expect(html.match(/\s(?:src|href)="[^"]*"/g)).toEqual([' href="data:,"']);
      expect(html).not.toMatch(/@import|url\(/);
    }
  });

  it('offers the way back to the merchant on the expiry page only with a result_url', () => {
    const back = renderExpiredPage({ order: hostile, returnUrl: 'https://shop.test/r?a=1&b="2"' });
    expect(back).toContain(
      '<a class="return" href="https://shop.test/r?a=1&amp;b=&quot;2&quot;">Return to Tea &quot;&amp;&quot; &lt;Co&gt;</a>',
    );
    expect(renderExpiredPage({ order: hostile, returnUrl: undefined })).not.toContain('class="return"');
  });

  it('escapes message pages, receipts and plain values', () => {
    expect(renderMessagePage('<t>', 'a & b')).toContain('<h2>&lt;t&gt;</h2>\n<p id="message">a &amp; b</p>');
    expect(escapeHtml(undefined)).toBe('');
    const receipt = renderReceiptPage({
      method: 'purchase',
      amount: 10,
      currency: 'XTS',
      order_id: '<o>',
      payment_id: 'p',
      status: 'success',
      created_at: '2026-01-01T00:00:00',
    });
    expect(receipt).toContain('<tr><th>Amount</th><td>10.00 XTS</td></tr>');
    expect(receipt).toContain('<tr><th>Order</th><td>&lt;o&gt;</td></tr>');
  });
});
