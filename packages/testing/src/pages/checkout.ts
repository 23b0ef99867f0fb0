import { formatAmount } from './amount.js';
import { CARD_MESSAGES, type CardField } from './card-form.js';
import { CARD_SCRIPT } from './card-script.js';
import { escapeHtml, renderPage } from './layout.js';
import { type OrderSummary, renderOrderDetails, renderOrderHeader } from './order.js';

/** What the hosted checkout shows: the order, the fields as last sent, and their errors. */
export interface CheckoutPageInput {
  order: OrderSummary;
  /** The fake clock's month, `YYYY-MM`: the page's script refuses cards that expired before it. */
  month: string;
  /** When the payment expires (`order_timeout`), as the page says it: `2026-05-05 12:30 UTC`. */
  expiresAt?: string;
  /** Values to keep in the fields after the server refused the card (never the CVV). */
  values?: Partial<Record<CardField, string>>;
  errors?: Partial<Record<CardField, string>>;
  /** Show the test shortcuts (pay, decline, fail 3DS) under the form. */
  shortcuts?: boolean;
}

interface FieldSpec {
  name: CardField;
  label: string;
  autocomplete: string;
  inputmode?: string;
  placeholder?: string;
  maxlength: number;
}

const FIELDS: Readonly<Record<CardField, FieldSpec>> = {
  cc_number: {
    name: 'cc_number',
    label: 'Card number',
    autocomplete: 'cc-number',
    inputmode: 'numeric',
    placeholder: '1234 1234 1234 1234',
    maxlength: 23,
  },
  exp: { name: 'exp', label: 'Expiry date', autocomplete: 'cc-exp', placeholder: 'MM/YY', maxlength: 7 },
  cvv: {
    name: 'cvv',
    label: 'CVV',
    autocomplete: 'cc-csc',
    inputmode: 'numeric',
    placeholder: '123',
    maxlength: 4,
  },
  cardholder: { name: 'cardholder', label: 'Cardholder name', autocomplete: 'cc-name', maxlength: 100 },
};

function renderField(spec: FieldSpec, input: CheckoutPageInput): string {
  const id = spec.name.replace('_', '-');
  const error = input.errors?.[spec.name] ?? '';
  const value = spec.name === 'cvv' ? '' : (input.values?.[spec.name] ?? '');
  const attributes = [
    `id="${id}"`,
    `name="${spec.name}"`,
    `autocomplete="${spec.autocomplete}"`,
    spec.inputmode === undefined ? '' : `inputmode="${spec.inputmode}"`,
    spec.placeholder === undefined ? '' : `placeholder="${spec.placeholder}"`,
    `maxlength="${spec.maxlength}"`,
    `aria-describedby="${spec.name}-error"`,
    error === '' ? '' : 'aria-invalid="true"',
    value === '' ? '' : `value="${escapeHtml(value)}"`,
  ].filter((attribute) => attribute !== '');
  return `<div class="field"><label for="${id}">${spec.label}</label><input ${attributes.join(' ')}>
<p class="error" id="${spec.name}-error" aria-live="polite">${escapeHtml(error)}</p></div>`;
}

const SHORTCUTS = `<form method="post" class="shortcuts" aria-label="Test shortcuts">
<p class="note">Test shortcuts (<code>?shortcuts=1</code>): settle without a card.</p>
<button type="submit" name="action" value="pay" id="pay">Pay</button>
<button type="submit" name="action" value="decline" id="decline">Decline</button>
<button type="submit" name="action" value="fail_3ds" id="fail_3ds">Fail 3DS</button>
</form>`;

/**
 * The hosted checkout: the merchant and the order, Apple Pay and Google Pay buttons, then the card form with
 * inline checks (the page's script, and the server's answer when it refused the card). Every value is escaped.
 *
 * @example
 * renderCheckoutPage({ order: { merchant: 'Tea shop', description: 'Tea', orderId: 'o-1', amount: 10, currency: 'XTS' }, month: '2026-05' });
 */
export function renderCheckoutPage(input: CheckoutPageInput): string {
  const { order } = input;
  const amount = formatAmount(order.amount, order.currency);
  const details: Array<[string, string]> =
    input.expiresAt === undefined ? [] : [['Pay before', input.expiresAt]];
  const fields = FIELDS;
  return renderPage(
    `Pay ${amount} to ${order.merchant}`,
    `${renderOrderHeader(order)}
${renderOrderDetails(order, details)}
<form method="post" class="wallets" aria-label="Wallets">
<button type="submit" class="wallet apple" name="wallet" value="apple_pay" aria-label="Pay with Apple Pay">Apple Pay</button>
<button type="submit" class="wallet google" name="wallet" value="google_pay" aria-label="Pay with Google Pay"><span class="brand-g">G</span> Pay</button>
</form>
<p class="divider">or pay by card</p>
<form method="post" id="card-form" aria-label="Card" novalidate data-now="${escapeHtml(input.month)}" data-messages="${escapeHtml(JSON.stringify(CARD_MESSAGES))}">
${renderField(fields.cc_number, input)}
<div class="row">${renderField(fields.exp, input)}${renderField(fields.cvv, input)}</div>
${renderField(fields.cardholder, input)}
<button type="submit" class="pay">Pay ${escapeHtml(amount)}</button>
</form>
${input.shortcuts ? SHORTCUTS : ''}`,
    CARD_SCRIPT,
  );
}
