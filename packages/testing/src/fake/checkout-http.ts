import { type CardField, cardErrors, readCardForm } from '../pages/card-form.js';
import { renderCheckoutPage } from '../pages/checkout.js';
import { renderExpiredPage } from '../pages/expired.js';
import { renderMessagePage } from '../pages/layout.js';
import type { OrderSummary } from '../pages/order.js';
import { renderThreeDsPage } from '../pages/three-ds.js';
import { FakeServiceError } from './errors.js';
import type { ApiResponse } from './exchange.js';
import { THREE_DS_CODE } from './outcomes.js';
import type { FakeService } from './service.js';
import type { CheckoutAction, CheckoutStep, CheckoutView, Wallet } from './types.js';

const ACTIONS: readonly CheckoutAction[] = ['pay', 'decline', 'fail_3ds'];
const WALLETS: readonly Wallet[] = ['apple_pay', 'google_pay'];

/** An HTML answer. */
export function html(status: number, body: string): ApiResponse {
  return { status, headers: { 'content-type': 'text/html; charset=utf-8' }, body };
}

function orderOf(view: CheckoutView): OrderSummary {
  const { record } = view;
  return {
    merchant: view.merchantName,
    description: record.description,
    orderId: record.order_id,
    amount: record.amount,
    currency: record.currency,
  };
}

/** `2026-05-05 12:30 UTC`. */
function utcMinute(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function completedPage(view: Pick<CheckoutView, 'record'>): ApiResponse {
  const title = view.record.status === 'success' ? 'Payment complete' : 'Payment not completed';
  return html(200, renderMessagePage(title, `The payment status is ${String(view.record.status)}.`));
}

/** The page an open payment is at: the card form (with the refused card's values and errors), or the 3DS step. */
function openPage(
  fake: FakeService,
  view: CheckoutView,
  shortcuts: boolean,
  refused?: { form: URLSearchParams; errors: Partial<Record<CardField, string>> },
): string {
  const order = orderOf(view);
  if (view.threeDs) {
    const cardMask = typeof view.record.cc_mask === 'string' ? view.record.cc_mask : undefined;
    return renderThreeDsPage({ order, cardMask, code: THREE_DS_CODE, shortcuts });
  }
  const values = refused && {
    cc_number: refused.form.get('cc_number') ?? '',
    exp: refused.form.get('exp') ?? '',
    cardholder: refused.form.get('cardholder') ?? '',
  };
  return renderCheckoutPage({
    order,
    month: fake.clock.now().toISOString().slice(0, 7),
    ...(view.expiresAt === undefined ? {} : { expiresAt: utcMinute(view.expiresAt) }),
    shortcuts,
    ...(refused ? { values, errors: refused.errors } : {}),
  });
}

/** What a POSTed page asks: a shortcut `action`, a `wallet` button, a 3DS `code`, else the card form. */
function submit(fake: FakeService, checkoutId: string, form: URLSearchParams): CheckoutStep {
  const action = form.get('action');
  if (action !== null) {
    const chosen = ACTIONS.find((known) => known === action);
    if (chosen === undefined) throw new FakeServiceError('R-400', 400, 'Choose pay, decline or fail_3ds.');
    return fake.completeCheckout(checkoutId, chosen);
  }
  const wallet = form.get('wallet');
  if (wallet !== null) {
    const chosen = WALLETS.find((known) => known === wallet);
    if (chosen === undefined) throw new FakeServiceError('R-400', 400, 'Choose apple_pay or google_pay.');
    return fake.payByWallet(checkoutId, chosen);
  }
  const code = form.get('code');
  if (code !== null) return fake.confirmThreeDs(checkoutId, code);
  return fake.payByCard(checkoutId, readCardForm(form));
}

/**
 * The hosted checkout and 3DS pages (`/api/v1/checkout/<id>/form|3ds`): a GET shows the page the payment is at,
 * a POST does what the page sent and redirects (`303`) to the next page or to `result_url`. A card the fake
 * refuses shows the form again (400) with each field's error; `?shortcuts=1` adds the pay / decline / fail 3DS
 * buttons.
 */
export function checkoutPage(
  fake: FakeService,
  method: string,
  query: URLSearchParams,
  body: string,
  checkoutId: string,
): ApiResponse {
  let view: CheckoutView;
  try {
    view = fake.checkout(checkoutId);
  } catch {
    return html(404, renderMessagePage('Not found', 'There is no such checkout.'));
  }
  if (view.expired) {
    const result = view.record.result_url;
    return html(
      410,
      renderExpiredPage({ order: orderOf(view), returnUrl: typeof result === 'string' ? result : undefined }),
    );
  }
  const shortcuts = query.get('shortcuts') === '1';
  if (method === 'GET') return view.open ? html(200, openPage(fake, view, shortcuts)) : completedPage(view);
  const form = new URLSearchParams(body);
  try {
    const step = submit(fake, checkoutId, form);
    if (step.redirectTo !== undefined)
      return { status: 303, headers: { location: step.redirectTo }, body: '' };
    return completedPage(step);
  } catch (error) {
    if (!(error instanceof FakeServiceError)) throw error;
    if (error.code === 'V-400') {
      const errors = cardErrors(error.violations, form);
      return html(400, openPage(fake, view, shortcuts, { form, errors }));
    }
    if (error.status === 409) return html(409, renderMessagePage('Already completed', error.message));
    return html(error.status, renderMessagePage('Bad request', error.message));
  }
}
