import type { Commission, LimitInfo, PaymentDetails, RecurringInfo, Status } from '@payhook/core';

/**
 * Integration mode (spec 1): the merchant sends card data (`direct`) or redirects to the checkout (`hosted`).
 *
 * @example
 * const mode: PaymentMode = 'hosted';
 */
export type PaymentMode = 'direct' | 'hosted' | (string & {});

/**
 * Payment method of a primary request (spec 4.1): reserve (`auth`) or one-step payment (`purchase`).
 *
 * @example
 * const method: PaymentMethod = 'purchase';
 */
export type PaymentMethod = 'auth' | 'purchase' | (string & {});

/**
 * Secondary operation methods (spec 2.2).
 *
 * @example
 * const method: OperationMethod = 'refund';
 */
export type OperationMethod = 'capture' | 'void' | 'refund' | (string & {});

/**
 * 3-D Secure flow option. Allowed values are not shown by the spec; public plugins send these three.
 *
 * @example
 * const bypass: Order3dsBypass = 'supported';
 */
export type Order3dsBypass = 'supported' | 'always' | 'never' | (string & {});

/**
 * Unit of a subscription's schedule (spec 4.5).
 *
 * @example
 * const unit: IntervalUnit = 'month';
 */
export type IntervalUnit = 'day' | 'week' | 'month' | 'quarter' | 'year' | (string & {});

/**
 * A product line. Its fields are not shown by the spec (they depend on fiscalization), so any object is kept.
 *
 * @example
 * const products: Product[] = [{ name: 'Book', price: 10.5, quantity: 1 }];
 */
export type Product = Record<string, unknown>;

/**
 * Browser data for 3DS 2.0 verification (spec 2.3); every member is a string.
 *
 * @example
 * const fingerprint: BrowserFingerprint = { browserLanguage: 'uk-UA', browserColorDepth: '24' };
 */
export interface BrowserFingerprint {
  browserColorDepth?: string;
  browserScreenHeight?: string;
  browserScreenWidth?: string;
  browserJavaEnabled?: string;
  browserLanguage?: string;
  browserTimeZone?: string;
  browserTimeZoneOffset?: string;
  browserAcceptHeader?: string;
  browserIpAddress?: string;
  browserUserAgent?: string;
}

/**
 * The `init_recurring` object that turns a payment into a subscription (spec 4.5).
 *
 * @example
 * const init: InitRecurring = { interval_unit: 'month', interval_count: 1, start_date: '2026-12-01' };
 */
export interface InitRecurring {
  interval_unit: IntervalUnit;
  /** Units between charges, 1 to 30. */
  interval_count: number;
  /** Retries after a failed charge, 0 to 7. @default 3 */
  retry_attempts?: number;
  /** Hours between retries: 1 to 23 for `day`, 1 to 72 otherwise. @default 2 for `day`, else 24 */
  retry_interval_hours?: number;
  /** First scheduled charge, `YYYY-MM-DD`. */
  start_date?: string;
  /** Last scheduled charge, `YYYY-MM-DD`, not before `start_date`. */
  expiry_date?: string;
  /** Charge time in UTC, `HH:MM:SS`. @default the time the subscription was created */
  time?: string;
  /** Target of recurring notifications. @default the initial payment's `server_url` */
  notification_url?: string;
  /** Recurring amount when it differs from the initial one. @default the initial amount */
  amount?: number;
}

/**
 * `init_recurring` with the spec's defaults applied (see `resolveInitRecurring`).
 *
 * @example
 * const { retry_attempts, retry_interval_hours }: ResolvedInitRecurring = resolveInitRecurring(init);
 */
export interface ResolvedInitRecurring extends InitRecurring {
  retry_attempts: number;
  retry_interval_hours: number;
}

/**
 * Body of `POST /api/v1/payment` (spec 4.1); with `init_recurring` it also creates a subscription (4.5).
 *
 * @example
 * const request: PaymentRequest = {
 *   pos_id: 'c2b6d5ae-3c8f-4e2b-9a7d-1f0e5b4c3a21', mode: 'hosted', method: 'purchase',
 *   amount: 100.5, currency: 'UAH', description: 'Order 1', order_id: 'o-1',
 *   server_url: 'https://shop.example/webhooks',
 * };
 */
export interface PaymentRequest {
  pos_id: string;
  mode: PaymentMode;
  method: PaymentMethod;
  /** Positive, at most 2 decimal digits, sent as a JSON number. */
  amount: number;
  /** ISO 4217 code (`XTS` for tests). */
  currency: string;
  /** At most 2048 characters. */
  description: string;
  /** Unique per order, at most 256 characters. */
  order_id: string;
  order_3ds_bypass?: Order3dsBypass;
  /** Direct mode, digits only. */
  cc_number?: string;
  /** Direct mode, 1 to 12, a JSON number. */
  exp_month?: number;
  /** Direct mode, 2 or 4 digits, a JSON number. */
  exp_year?: number;
  /** Direct mode, 3 or 4 digits. */
  card_cvv?: string;
  /** The spelling the spec's samples use for `card_cvv`. */
  cc_cvv?: string;
  /** Direct mode: replaces the four card fields; Apple Pay and Google Pay tokens may carry the prefix `rcr:`. */
  cc_token?: string;
  products?: Product[];
  customer_id?: string;
  customer_fname?: string;
  customer_lname?: string;
  customer_patronym?: string;
  customer_email?: string;
  customer_phone?: string;
  /** Direct mode. */
  customer_ip?: string;
  /** ISO 3166-1 alpha-2. */
  customer_country?: string;
  /** `yyyy-MM-dd`. */
  customer_birthday?: string;
  /** Direct mode: the page the customer came from. */
  customer_referrer?: string;
  /** Hosted mode: checkout language. */
  customer_lang?: string;
  customer_tax_id?: string;
  /** Webhook target. */
  server_url?: string;
  /** Customer redirect after payment. */
  result_url?: string;
  merchant_mcc?: string | number;
  /** Merchant data echoed back, at most 4000 characters. */
  payload?: string;
  /** Preflight request target. */
  validation_url?: string;
  /** Direct mode, for 3DS 2.0. */
  browser_fingerprint?: BrowserFingerprint;
  /** Direct mode: an Apple Pay or Google Pay wallet payment, in place of the card fields; fields not shown by the spec. */
  cryptogram?: Record<string, unknown>;
  /** Hosted mode: payment lifespan in seconds. */
  order_timeout?: number;
  payway?: string;
  init_recurring?: InitRecurring;
}

/** One sub-merchant's share of a split payment (spec 2.3).
 *
 * @example
 * const item: SplitItem = { amount: 60.1, sub_merchant_id: '0b9f3c1e-6a2d-4f7b-8c5e-3d1a9b7c5e20' };
 */
export interface SplitItem {
  /** Positive, at most 2 decimal digits. */
  amount: number;
  /** Issued by the service's support. */
  sub_merchant_id: string;
  products?: Product[];
}

/** Body of `POST /api/v1/split/purchase` (spec 4.2). Direct mode also requires the customer's names and IP.
 *
 * @example
 * const split: SplitPurchaseRequest = {
 *   ...request, method: 'purchase', order_3ds_bypass: 'supported',
 *   customer_email: 'olena@example.com', customer_phone: '+380501234567', split: [item],
 * };
 */
export interface SplitPurchaseRequest extends Omit<PaymentRequest, 'method'> {
  method: 'purchase';
  order_3ds_bypass: Order3dsBypass;
  customer_email: string;
  customer_phone: string;
  split: SplitItem[];
}

/** Payment record (spec 2.1): the body of a direct payment's response and of 4.4's re-send response.
 *
 * @example
 * const record = (await response.json()) as PaymentRecord;
 * if (record.user_action_required) redirect(record.user_action_url);
 */
export interface PaymentRecord extends PaymentDetails {
  payment_id: string;
  order_id: string;
  transaction_id?: string;
  pos_id: string;
  mode: PaymentMode;
  method: PaymentMethod;
  amount: number;
  currency: string;
  status: Status;
  status_code?: string;
  status_description?: string;
  /** Zone-less `YYYY-MM-DDTHH:MM:SS[.fff]`. */
  created_at?: string;
  processed_at?: string;
  fee?: Commission;
  fixed_fee?: Commission;
  percent_fee?: Commission;
  receipt_url?: string;
  /** Changeable-amount payments only. */
  processed_amount?: number;
  processed_currency?: string;
  /** Declared a string by the spec; samples carry an object. */
  limit_info?: LimitInfo | string;
  /** Split responses echo these request fields. */
  split?: SplitItem[];
  validation_url?: string;
  browser_fingerprint?: BrowserFingerprint;
  merchant_mcc?: string | number;
  server_url?: string;
}

/** A subscription's payment record: 4.5's creation response and 4.4's re-send response carry `recurring`.
 *
 * @example
 * const record = (await response.json()) as RecurringPaymentRecord;
 * console.log(record.recurring.id, record.recurring.status);
 */
export type RecurringPaymentRecord = PaymentRecord & { recurring: RecurringInfo };

/** Secondary operation record (spec 2.2): capture, void, refund.
 *
 * @example
 * const refund = (await response.json()) as OperationRecord;
 * console.log(refund.operation_id, refund.amount);
 */
export interface OperationRecord {
  operation_id: string;
  payment_id: string;
  order_id: string;
  transaction_id?: string;
  pos_id: string;
  mode: PaymentMode;
  method: OperationMethod;
  /** The actual amount of the operation. */
  amount: number;
  currency: string;
  status: Status;
  status_code?: string;
  status_description?: string;
  /** Capture only. */
  limit_info?: LimitInfo | string;
  fee?: Commission;
  fixed_fee?: Commission;
  percent_fee?: Commission;
  created_at?: string;
  processed_at?: string;
  /** Refund only. */
  receipt_url?: string;
  processed_amount?: number;
  processed_currency?: string;
}

/** A hosted payment's response (spec 4.1, 4.2): `303` to `{base_url}/api/v1/checkout/<checkout_id>/form`.
 *
 * @example
 * const redirect: HostedRedirect = { status: 303, location: `${baseUrl}/api/v1/checkout/${checkoutId}/form` };
 */
export interface HostedRedirect {
  status: 303;
  /** The `Location` header: the checkout page to send the customer to. */
  location: string;
}

/** What creating a payment answers: a record in direct mode, a redirect in hosted mode.
 *
 * @example
 * if ('location' in response) res.redirect(303, response.location);
 */
export type PaymentResponse = PaymentRecord | HostedRedirect;

/** `GET /api/v1/pos/<pos_id>/orders/<order_id>/<operation>?callback=true` (spec 4.3); its body is not shown.
 *
 * @example
 * const resend: ResendWebhookRequest = { pos_id, order_id: 'o-1', operation: 'void', callback: true };
 */
export interface ResendWebhookRequest {
  pos_id: string;
  order_id: string;
  /** For example `purchase` or `void`. */
  operation: string;
  callback: true;
}

/** Spec 4.4: re-send a recurring payment's webhook; without `transactionId`, the latest charge's data.
 *
 * @example
 * const resend: ResendRecurringWebhookRequest = { pos_id, order_id: 'o-1', operation: 'purchase', callback: true };
 */
export interface ResendRecurringWebhookRequest {
  pos_id: string;
  order_id: string;
  operation: 'purchase';
  callback: true;
  transactionId?: string;
}
