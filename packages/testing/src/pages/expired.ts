import { escapeHtml, renderPage } from './layout.js';
import { type OrderSummary, renderOrderDetails, renderOrderHeader } from './order.js';

/**
 * The page of a hosted payment past its `order_timeout`: what expired, and the way back to the merchant
 * (`result_url`) when the request gave one. Every value is escaped.
 *
 * @example
 * renderExpiredPage({ order, returnUrl: 'https://shop.test/thanks' });
 */
export function renderExpiredPage(input: { order: OrderSummary; returnUrl: string | undefined }): string {
  const back =
    input.returnUrl === undefined
      ? ''
      : `<a class="return" href="${escapeHtml(input.returnUrl)}">Return to ${escapeHtml(input.order.merchant)}</a>`;
  return renderPage(
    'Payment expired',
    `${renderOrderHeader(input.order)}
<h2>This payment has expired</h2>
<p id="message" class="note">The time to pay this order ran out, and nothing was charged. Start again from the shop.</p>
${renderOrderDetails(input.order)}
${back}`,
  );
}
