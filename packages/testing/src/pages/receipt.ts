import type { PaymentRecord } from '@payhook/payments';
import { formatAmount } from './amount.js';
import { escapeHtml, renderPage } from './layout.js';

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
    ['Amount', formatAmount(record.amount, record.currency)],
    ['Order', record.order_id],
    ['Payment', record.payment_id],
    ['Card', record.cc_mask ?? ''],
    ['Status', record.status],
    ['Date (UTC)', record.processed_at ?? record.created_at],
  ];
  return renderPage(
    'Receipt',
    `<h1>Receipt</h1>
<table>
${rows.map(([name, value]) => `<tr><th>${escapeHtml(name)}</th><td>${escapeHtml(value)}</td></tr>`).join('\n')}
</table>`,
  );
}
