/**
 * How the fake settles a payment: paid, paused for 3-D Secure, declined with `limit_info`, or declined for
 * insufficient funds (`2001`, no `limit_info`).
 *
 * @example
 * fake.setOutcome({ orderId: 'order-7' }, '3ds');
 */
export type PaymentOutcome = 'success' | '3ds' | 'decline' | 'insufficient_funds';

/**
 * Card numbers (all pass the Luhn check) whose outcome is fixed, so a test picks a scenario by card alone, in a
 * direct request or typed into the hosted checkout. Any other valid card succeeds. `threeDs` asks for the
 * 3-D Secure code: `THREE_DS_CODE` passes, any other code fails (`2123`).
 *
 * @example
 * const body = { ...payment, cc_number: TEST_CARDS.threeDs }; // answers pending 2122
 */
export const TEST_CARDS = {
  success: '4242424242424242',
  threeDs: '4000000000003220',
  decline: '4000000000000002',
  insufficientFunds: '4000000000009995',
} as const;

/**
 * The code that passes the fake's 3-D Secure page; any other code fails the payment (`2123`).
 *
 * @example
 * await page.getByLabel('Verification code').fill(THREE_DS_CODE);
 */
export const THREE_DS_CODE = '123456';

/** Status texts of the fake: 1000, 1002, 1004, 2122 from the spec and public facts; the failure codes (2000, as the fixtures, 2001, 2123 and 2124) and 1100 are the toolkit's. */
export const STATUS = {
  purchaseSuccess: {
    status: 'success',
    status_code: '1000',
    status_description: 'Transaction is successful',
  },
  authSuccess: { status: 'success', status_code: '1002', status_description: 'Transaction is successful' },
  refundSuccess: { status: 'success', status_code: '1004', status_description: 'Refund successful' },
  pending3ds: {
    status: 'pending',
    status_code: '2122',
    status_description: '3DS verification is required to finish the transaction',
  },
  declined: {
    status: 'failure',
    status_code: '2000',
    status_description: 'Transaction declined: limit exceeded',
  },
  insufficientFunds: {
    status: 'failure',
    status_code: '2001',
    status_description: 'Transaction declined: insufficient funds',
  },
  failed3ds: { status: 'failure', status_code: '2123', status_description: '3DS verification failed' },
  created: { status: 'init', status_code: '1100', status_description: 'Waiting for the customer' },
  expired: { status: 'failure', status_code: '2124', status_description: 'The payment lifespan expired' },
} as const;

/** Picks the outcome: a per-order choice first, then a per-card choice, then the test cards, then success. */
export function chooseOutcome(
  orderId: string,
  cardNumber: string | undefined,
  byOrder: ReadonlyMap<string, PaymentOutcome>,
  byCard: ReadonlyMap<string, PaymentOutcome>,
): PaymentOutcome {
  const forOrder = byOrder.get(orderId);
  if (forOrder) return forOrder;
  if (cardNumber === undefined) return 'success';
  const forCard = byCard.get(cardNumber);
  if (forCard) return forCard;
  if (cardNumber === TEST_CARDS.threeDs) return '3ds';
  if (cardNumber === TEST_CARDS.decline) return 'decline';
  if (cardNumber === TEST_CARDS.insufficientFunds) return 'insufficient_funds';
  return 'success';
}
