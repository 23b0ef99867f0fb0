import type { PaymentRecord } from '@payhook/core/validation';

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function page(title: string, content: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body>
<main>
${content}
</main>
</body>
</html>
`;
}

/** What a checkout or 3DS page shows of the payment. */
interface CheckoutPageInput {
  amount: unknown;
  currency: unknown;
  description: unknown;
  orderId: unknown;
  /** The page is the 3-D Secure step of a direct payment rather than the hosted form. */
  threeDs: boolean;
}

/**
 * The hosted checkout form or 3DS page: the amount, the description, and one button per outcome. Every value
 * is escaped.
 *
 * @example
 * renderCheckoutPage({ amount: 10, currency: 'XTS', description: 'Tea', orderId: 'o-1', threeDs: false });
 */
export function renderCheckoutPage(input: CheckoutPageInput): string {
  const title = input.threeDs ? '3-D Secure verification' : 'Checkout';
  return page(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p>Amount: <strong id="amount">${escapeHtml(input.amount)} ${escapeHtml(input.currency)}</strong></p>
<p>Description: <span id="description">${escapeHtml(input.description)}</span></p>
<p>Order: <span id="order">${escapeHtml(input.orderId)}</span></p>
<form method="post">
<button type="submit" name="action" value="pay" id="pay">Pay</button>
<button type="submit" name="action" value="decline" id="decline">Decline</button>
<button type="submit" name="action" value="fail_3ds" id="fail_3ds">Fail 3DS</button>
</form>`,
  );
}

/**
 * A short page with a heading and one line, for results and errors.
 *
 * @example
 * renderMessagePage('Payment complete', 'The payment status is success.');
 */
export function renderMessagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p id="message">${escapeHtml(message)}</p>`);
}

/** What a receipt shows of a payment, charge or refund record. */
type ReceiptRecord = Pick<
  PaymentRecord,
  'method' | 'amount' | 'currency' | 'order_id' | 'payment_id' | 'status' | 'processed_at' | 'created_at'
> & { cc_mask?: string | undefined };

/**
 * The receipt a `receipt_url` opens (spec 2.1): what was paid or refunded, for which order, and when. Every
 * value is escaped.
 *
 * @example
 * renderReceiptPage(fake.receipt(token)!);
 */
export function renderReceiptPage(record: ReceiptRecord): string {
  const rows = [
    ['Operation', record.method],
    ['Amount', `${record.amount} ${record.currency}`],
    ['Order', record.order_id],
    ['Payment', record.payment_id],
    ['Card', record.cc_mask ?? ''],
    ['Status', record.status],
    ['Date (UTC)', record.processed_at ?? record.created_at],
  ];
  return page(
    'Receipt',
    `<h1>Receipt</h1>
<table>
${rows.map(([name, value]) => `<tr><th>${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`).join('\n')}
</table>`,
  );
}
