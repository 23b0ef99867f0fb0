import type { FakeViolation } from '../fake/errors.js';
import type { CheckoutCard } from '../fake/types.js';

/** The card form's fields, by their `name`. */
export type CardField = 'cc_number' | 'exp' | 'cvv' | 'cardholder';

/** What a field's inline error says, by field and reason; the page's script and the server show the same words. */
export const CARD_MESSAGES: Readonly<
  Record<CardField, { required: string; invalid: string; expired?: string }>
> = {
  cc_number: { required: 'Enter the card number.', invalid: 'This card number is not valid.' },
  exp: {
    required: 'Enter the expiry date.',
    invalid: 'Enter the expiry date as MM/YY.',
    expired: 'This card has expired.',
  },
  cvv: { required: 'Enter the CVV.', invalid: 'The CVV is 3 or 4 digits.' },
  cardholder: { required: 'Enter the name on the card.', invalid: 'Enter the name on the card.' },
};

const EXPIRY = /^\s*(\d{1,2})\s*\/?\s*(\d{2}|\d{4})\s*$/;

/** The card a POSTed form carries; an expiry that is not MM/YY reads as NaN, which the card checks refuse. */
export function readCardForm(form: URLSearchParams): CheckoutCard {
  const expiry = EXPIRY.exec(form.get('exp') ?? '');
  return {
    number: form.get('cc_number') ?? '',
    expMonth: expiry ? Number(expiry[1]) : Number.NaN,
    expYear: expiry ? Number(expiry[2]) : Number.NaN,
    cvv: form.get('cvv') ?? '',
    holder: form.get('cardholder') ?? '',
  };
}

const FIELD_OF: Readonly<Record<string, CardField>> = {
  cc_number: 'cc_number',
  exp_month: 'exp',
  exp_year: 'exp',
  card_cvv: 'cvv',
  cardholder: 'cardholder',
};

/** Each field's inline error for the violations the fake found, worded as the page's script words them. */
export function cardErrors(
  violations: readonly FakeViolation[],
  form: URLSearchParams,
): Partial<Record<CardField, string>> {
  const errors: Partial<Record<CardField, string>> = {};
  for (const violation of violations) {
    const field = FIELD_OF[violation.field];
    if (field === undefined || errors[field] !== undefined) continue;
    const messages = CARD_MESSAGES[field];
    errors[field] =
      (form.get(field) ?? '').trim() === ''
        ? messages.required
        : violation.code === 'card.expired' && messages.expired !== undefined
          ? messages.expired
          : messages.invalid;
  }
  return errors;
}
