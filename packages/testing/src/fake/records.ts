import { type Commission, currencyExponent, toMinorUnits } from '@payhook/core';
import { formatTimestamp } from './calendar.js';
import type { IdSource } from './ids.js';

/**
 * A JSON object as the API answers it and as webhooks carry it.
 *
 * @example
 * const record: FakeRecord = { payment_id: 'p-1', status: 'success' };
 */
export type FakeRecord = Record<string, unknown>;

/** Request fields echoed in the payment record (2.1). Card data is never echoed: only `cc_mask`. */
const ECHOED = [
  'order_id',
  'mode',
  'method',
  'amount',
  'currency',
  'description',
  'customer_id',
  'customer_ip',
  'customer_fname',
  'customer_lname',
  'customer_patronym',
  'customer_email',
  'customer_phone',
  'customer_country',
  'customer_birthday',
  'result_url',
  'payload',
  'payway',
] as const;

/** The split response's extra echoes (2.1, last paragraphs). */
const SPLIT_ECHOED = [
  'split',
  'validation_url',
  'browser_fingerprint',
  'merchant_mcc',
  'server_url',
] as const;

/** Integer minor units of an amount. */
export function toMinor(amount: number, currency: string): number {
  return toMinorUnits(amount, currency);
}

/** An amount in major units from minor units. */
export function fromMinor(minor: number, currency: string): number {
  return minor / 10 ** currencyExponent(currency);
}

/** The fake's commission: 1.5 % of the amount, rounded to the currency's minor unit, no fixed part. */
export function commission(
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

export interface NewRecordInput {
  request: Readonly<Record<string, unknown>>;
  posId: string;
  split: boolean;
  ids: IdSource;
  now: Date;
}

/** The initial payment record (2.1) for a validated request, before any outcome is applied. */
export function newPaymentRecord({ request, posId, split, ids, now }: NewRecordInput): FakeRecord {
  const record: FakeRecord = {
    payment_id: ids.uuid(),
    order_id: request.order_id,
    gateway_order_id: `gw-${ids.hex(8)}`,
    billing_order_id: `bo-${ids.hex(8)}`,
    transaction_id: ids.uuid(),
    pos_id: posId,
  };
  for (const field of ECHOED) if (request[field] !== undefined) record[field] = request[field];
  if (split)
    for (const field of SPLIT_ECHOED) if (request[field] !== undefined) record[field] = request[field];
  // The request's MCC, sent as text or as a number (spec 2.1 types it MCC), as 4 digits; 5999 when none was sent.
  const mcc = request.merchant_mcc;
  record.mcc =
    typeof mcc === 'string' ? mcc : typeof mcc === 'number' ? String(mcc).padStart(4, '0') : '5999';
  record.options_3ds = typeof request.order_3ds_bypass === 'string' ? request.order_3ds_bypass : 'supported';
  record.user_action_required = false;
  record.bank_short_name = 'FAKEBANK';
  record.created_at = formatTimestamp(now);
  record.processed_at = formatTimestamp(now);
  Object.assign(record, commission(request.amount as number, request.currency as string));
  return record;
}
