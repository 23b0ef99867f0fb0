import { checkAmount, checkString } from './checks.js';
import { amountCents, isUuid } from './formats.js';
import { checkPaymentBody, checkProducts } from './validate-body.js';
import { isPlainObject, type ValidationOptions, type ValidationResult, Violations } from './violations.js';

const HOSTED_REQUIRED = [
  'pos_id',
  'mode',
  'method',
  'amount',
  'currency',
  'description',
  'order_id',
  'order_3ds_bypass',
  'customer_email',
  'customer_phone',
];
// Spec 4.2's table; `split` itself is checked below.
const DIRECT_REQUIRED = [...HOSTED_REQUIRED, 'customer_fname', 'customer_lname', 'customer_ip'];

/** Checks `split` and returns the sum of its items in cents when every amount is valid. */
function checkSplit(v: Violations, split: unknown): number | undefined {
  if (split === undefined || split === null) {
    v.add('split', 'required', 'split is required.');
    return;
  }
  if (!Array.isArray(split)) {
    v.add('split', 'type', 'split must be an array of split items.');
    return;
  }
  if (split.length === 0) {
    v.add('split', 'split.empty', 'split must hold at least one item.');
    return;
  }
  let sum: number | undefined = 0;
  for (const [index, item] of split.entries()) {
    const prefix = `split[${index}]`;
    if (!isPlainObject(item)) {
      sum = undefined;
      v.add(prefix, 'type', `${prefix} must be an object.`);
      continue;
    }
    const cents = amountCents(checkAmount(v, item.amount, `${prefix}.amount`, true));
    sum = cents === undefined || sum === undefined ? undefined : sum + cents;
    checkString(v, item, 'sub_merchant_id', prefix, {
      required: true,
      format: [isUuid, 'format.uuid', 'a UUID'],
    });
    checkProducts(v, item.products, `${prefix}.products`);
  }
  return sum;
}

/**
 * Checks a `POST /api/v1/split/purchase` body (spec 4.2) and returns every violation with its field path:
 * `method` must be `purchase`; the required fields are the spec's table for the mode (direct adds
 * `customer_fname`, `customer_lname`, `customer_ip`); `split` is a non-empty array whose items each carry an
 * `amount` (positive, at most 2 decimals) and a UUID `sub_merchant_id`; everything `validatePaymentRequest`
 * checks on a body applies too. The split amounts must add up to `amount` unless `splitSum` says otherwise
 * (compared in cents, exactly).
 *
 * @example
 * validateSplitPurchaseRequest(body, { splitSum: 'at_most' }).violations;
 * // [{ field: 'split[1].amount', code: 'amount.invalid', message: '...' }]
 */
export function validateSplitPurchaseRequest(
  request: unknown,
  options: ValidationOptions = {},
): ValidationResult {
  const v = new Violations();
  if (!isPlainObject(request)) {
    v.add('', 'type', 'the request body must be a JSON object.');
    return v.result();
  }
  const required = request.mode === 'direct' ? DIRECT_REQUIRED : HOSTED_REQUIRED;
  checkPaymentBody(v, request, { required, methods: ['purchase'] }, options);
  const sum = checkSplit(v, request.split);
  const total = amountCents(request.amount);
  const rule = options.splitSum ?? 'equal';
  if (sum !== undefined && total !== undefined && typeof request.amount === 'number' && rule !== 'ignore') {
    if (rule === 'equal' && sum !== total) {
      v.add('split', 'split.sum_mismatch', 'the split amounts must add up to amount.');
    } else if (rule === 'at_most' && sum > total) {
      v.add('split', 'split.sum_mismatch', 'the split amounts must not add up to more than amount.');
    }
  }
  return v.result();
}
