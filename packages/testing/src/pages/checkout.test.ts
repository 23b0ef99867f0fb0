import { describe, expect, it } from 'vitest';
import { escapeHtml, renderCheckoutPage, renderMessagePage } from './checkout.js';

describe('checkout pages', () => {
  it('escapes every value it shows', () => {
    const html = renderCheckoutPage({
      amount: '1<2',
      currency: 'X"TS',
      description: `<script>alert('x')</script>&`,
      orderId: '<o>',
      threeDs: true,
    });
    expect(html).toContain('&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;');
    expect(html).toContain('1&lt;2 X&quot;TS');
    expect(html).toContain('<span id="order">&lt;o&gt;</span>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('<title>3-D Secure verification</title>');
    expect(html.match(/<button type="submit" name="action" value="(pay|decline|fail_3ds)"/g)).toHaveLength(3);
  });

  it('escapes message pages and plain values', () => {
    expect(renderMessagePage('<t>', 'a & b')).toContain('<h1>&lt;t&gt;</h1>\n<p id="message">a &amp; b</p>');
    expect(escapeHtml(undefined)).toBe('');
  });
});
