import { formatAmount } from './amount.js';
import { escapeHtml } from './layout.js';

/** What every checkout page shows of the order, as the payment record and the project hold it. */
export interface OrderSummary {
  merchant: string;
  description: unknown;
  orderId: unknown;
  amount: unknown;
  currency: unknown;
}

/** The merchant's name with its initial as a logo, then the amount and the description, all escaped. */
export function renderOrderHeader(order: OrderSummary): string {
  const initial = order.merchant.trim().charAt(0).toUpperCase() || '?';
  return `<p class="merchant"><span class="logo" aria-hidden="true">${escapeHtml(initial)}</span><span id="merchant">${escapeHtml(order.merchant)}</span></p>
<h1 id="amount">${escapeHtml(formatAmount(order.amount, order.currency))}</h1>
<div class="order"><p id="description">${escapeHtml(order.description)}</p></div>`;
}

/** The order's reference lines (order id, then `extra` label/value pairs), escaped. */
export function renderOrderDetails(order: OrderSummary, extra: ReadonlyArray<[string, string]> = []): string {
  const rows: Array<[string, string, string?]> = [['Order', String(order.orderId ?? ''), 'order'], ...extra];
  const lines = rows.map(
    ([name, value, id]) =>
      `<dt>${escapeHtml(name)}</dt><dd${id === undefined ? '' : ` id="${id}"`}>${escapeHtml(value)}</dd>`,
  );
  return `<dl class="summary">${lines.join('')}</dl>`;
}
