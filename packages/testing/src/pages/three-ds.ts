import { escapeHtml, renderPage } from './layout.js';
import { type OrderSummary, renderOrderDetails, renderOrderHeader } from './order.js';

/** What the 3-D Secure page shows: the order, the card, and the code that passes (a test page says it). */
export interface ThreeDsPageInput {
  order: OrderSummary;
  cardMask: string | undefined;
  code: string;
  /** Show the test shortcuts (pay, fail 3DS) under the form. */
  shortcuts?: boolean;
}

/**
 * The card issuer's 3-D Secure challenge: the order and the card, a code to enter, Confirm. Every value is
 * escaped.
 *
 * @example
 * renderThreeDsPage({ order, cardMask: '400000******3220', code: THREE_DS_CODE });
 */
export function renderThreeDsPage(input: ThreeDsPageInput): string {
  const details: Array<[string, string]> = input.cardMask === undefined ? [] : [['Card', input.cardMask]];
  return renderPage(
    '3-D Secure verification',
    `${renderOrderHeader(input.order)}
<h2>Confirm it is you</h2>
<p class="note">Your bank sent a one-time code to your phone. Enter it to confirm this payment.</p>
${renderOrderDetails(input.order, details)}
<p class="hint">Test mode: the code is <strong>${escapeHtml(input.code)}</strong>; any other code fails the payment.</p>
<form method="post" id="three-ds-form" aria-label="3-D Secure">
<div class="field"><label for="code">Verification code</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="12" required></div>
<button type="submit" class="pay">Confirm</button>
</form>
${
  input.shortcuts
    ? `<form method="post" class="shortcuts" aria-label="Test shortcuts">
<button type="submit" name="action" value="pay" id="pay">Pay</button>
<button type="submit" name="action" value="fail_3ds" id="fail_3ds">Fail 3DS</button>
</form>`
    : ''
}`,
  );
}
