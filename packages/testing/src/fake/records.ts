import {
  type Commission,
  currencyExponent,
  type LimitInfo,
  type RecurringInfo,
  toMinorUnits,
} from '@payhook/core';
import { CUSTOMER_FIELDS, type OperationRecord, type PaymentRecord } from '@payhook/payments';
import { addDuration, formatTimestamp } from './calendar.js';
import type { IdSource } from './ids.js';
import type { STATUS } from './outcomes.js';
import type { ValidRequest } from './validation.js';

/** One of the fake's status texts (`STATUS`): status, status_code and status_description together. */
export type StatusText = (typeof STATUS)[keyof typeof STATUS];

/** Request fields echoed in the payment record (2.1). Card data is never echoed: only `cc_mask`. */
const ECHOED = [
  'description',
  ...CUSTOMER_FIELDS,
  'result_url',
  'payload',
  'payway',
] as const satisfies readonly (keyof ValidRequest & keyof PaymentRecord)[];

/** The split response's extra echoes (2.1, last paragraphs). */
const SPLIT_ECHOED = [
  'split',
  'validation_url',
  'browser_fingerprint',
  'merchant_mcc',
  'server_url',
] as const satisfies readonly (keyof ValidRequest & keyof PaymentRecord)[];

/**
 * A record as its webhook carries it: without the split response's echoes, which spec 2.1 lists on the response
 * only (6.1 names the webhook's fields), so `payhook drift` stays silent on the fake's own webhooks.
 */
export function webhookFields<T extends object>(record: T): T {
  const sent = { ...record } as Record<string, unknown>;
  for (const key of SPLIT_ECHOED) delete sent[key];
  return sent as T;
}

/** The fields of `source` named by `keys` that it has (an absent or `undefined` field is left out). */
function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const picked: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) picked[key] = source[key];
  return picked;
}

/** Integer minor units of an amount. */
export function toMinor(amount: number, currency: string): number {
  return toMinorUnits(amount, currency);
}

/** An amount in major units from minor units. */
function fromMinor(minor: number, currency: string): number {
  return minor / 10 ** currencyExponent(currency);
}

/** The fake's commission: 1.5 % of the amount, rounded to the currency's minor unit, no fixed part. */
function commission(
  amount: number,
  currency: string,
): { fee: Commission; fixed_fee: Commission; percent_fee: Commission } {
  const fee = fromMinor(Math.round((toMinor(amount, currency) * 15) / 1000), currency);
  return {
    fee: { amount: fee, currency },
    fixed_fee: { amount: 0, currency },
    percent_fee: { amount: fee, currency },
  };
}

/** `424242******4242`: the first six and last four digits. */
export function maskCard(number: string): string {
  return `${number.slice(0, 6)}${'*'.repeat(Math.max(0, number.length - 10))}${number.slice(-4)}`;
}

/** A receipt link of the form the spec shows: `{base_url}/public/receipt/<receipt_token>`. */
export function receiptUrl(baseUrl: string, ids: IdSource): string {
  return `${baseUrl}/public/receipt/${ids.hex(16)}`;
}

/** The `limit_info` of a declined payment or charge: retry a day later. */
export function limitInfo(now: Date): LimitInfo {
  return {
    retry_after: formatTimestamp(addDuration(now, { days: 1 })),
    description: 'Daily card limit exceeded',
  };
}

/** The card data a payment record shows: the mask, the token and when the token expires. */
export type CardFields = Partial<Pick<PaymentRecord, 'cc_mask' | 'cc_token' | 'cc_token_expiration'>>;

/** A payment record before its card, subscription and status are known. */
type PaymentBase = Omit<PaymentRecord, 'status'>;

interface NewRecordInput {
  request: ValidRequest;
  posId: string;
  split: boolean;
  ids: IdSource;
  now: Date;
}

/** The payment record (2.1) of a validated request, before its card, subscription and status. */
export function newPaymentRecord({ request, posId, split, ids, now }: NewRecordInput): PaymentBase {
  const mcc = request.merchant_mcc;
  return {
    payment_id: ids.uuid(),
    order_id: request.order_id,
    gateway_order_id: `gw-${ids.hex(8)}`,
    billing_order_id: `bo-${ids.hex(8)}`,
    transaction_id: ids.uuid(),
    pos_id: posId,
    mode: request.mode,
    method: request.method,
    amount: request.amount,
    currency: request.currency,
    ...pick(request, ECHOED),
    ...(split ? pick(request, SPLIT_ECHOED) : {}),
    // The request's MCC, sent as text or as a number (spec 2.1 types it MCC), as 4 digits; 5999 when none was sent.
    mcc: typeof mcc === 'string' ? mcc : typeof mcc === 'number' ? String(mcc).padStart(4, '0') : '5999',
    options_3ds: typeof request.order_3ds_bypass === 'string' ? request.order_3ds_bypass : 'supported',
    user_action_required: false,
    bank_short_name: 'FAKEBANK',
    created_at: formatTimestamp(now),
    processed_at: formatTimestamp(now),
    ...commission(request.amount, request.currency),
  };
}

interface NewOperationInput {
  payment: PaymentRecord;
  method: 'capture' | 'void' | 'refund';
  minor: number;
  status: StatusText;
  ids: IdSource;
  now: Date;
}

/** A capture, void or refund record (2.2) of `minor` units of the payment's currency. */
export function newOperationRecord({
  payment,
  method,
  minor,
  status,
  ids,
  now,
}: NewOperationInput): OperationRecord {
  const { currency } = payment;
  const amount = fromMinor(minor, currency);
  return {
    operation_id: ids.uuid(),
    payment_id: payment.payment_id,
    order_id: payment.order_id,
    transaction_id: ids.uuid(),
    pos_id: payment.pos_id,
    mode: 'direct',
    method,
    amount,
    currency,
    ...status,
    ...commission(amount, currency),
    created_at: formatTimestamp(now),
    processed_at: formatTimestamp(now),
  };
}

/**
 * A subscription charge: the initial payment's record with a new transaction, the plan's amount and the
 * charge's time; no receipt, user action or `limit_info` until its outcome gives one.
 */
export function newChargeRecord(
  payment: PaymentRecord,
  charge: { amount: number; at: Date; recurring: RecurringInfo; ids: IdSource },
): PaymentRecord {
  const { user_action_url, limit_info, receipt_url, ...kept } = structuredClone(payment);
  return {
    ...kept,
    transaction_id: charge.ids.uuid(),
    amount: charge.amount,
    ...commission(charge.amount, payment.currency),
    created_at: formatTimestamp(charge.at),
    processed_at: formatTimestamp(charge.at),
    user_action_required: false,
    recurring: charge.recurring,
  };
}
