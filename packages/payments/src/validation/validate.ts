import { checkPaymentBody } from './validate-body.js';
import { isPlainObject, type ValidationOptions, type ValidationResult, Violations } from './violations.js';

/** Required fields of `/payment`; the spec marks none, see docs/assumptions.md (Validation). */
const PAYMENT_REQUIRED = ['pos_id', 'mode', 'method', 'amount', 'currency', 'description', 'order_id'];

/**
 * Checks a `POST /api/v1/payment` body (spec 4.1, 8), including `init_recurring` (4.5) when present, and
 * returns every violation with its field path. Required: `pos_id` (a UUID), `mode` (direct, hosted), `method`
 * (auth, purchase; purchase with `init_recurring`), `amount` (a JSON number, positive, at most 2 decimals),
 * `currency` (3 capital letters), `description` (at most 2048), `order_id` (at most 256). Direct mode needs
 * `cc_token` or the whole card (`validateCard`); hosted mode refuses card data. Optional fields are checked
 * when present (URLs, `customer_birthday`, `customer_country`, `payload` at most 4000, `order_3ds_bypass`,
 * `browser_fingerprint`, `order_timeout`, ...). `sector` adds the microfinance and iGaming rules. Unknown
 * fields are allowed: the service grows fields.
 *
 * @example
 * const result = validatePaymentRequest(req.body, { sector: 'igaming' });
 * if (!result.valid) console.warn(result.violations.map((v) => `${v.field}: ${v.code}`));
 */
export function validatePaymentRequest(request: unknown, options: ValidationOptions = {}): ValidationResult {
  const v = new Violations();
  if (!isPlainObject(request)) {
    v.add('', 'type', 'the request body must be a JSON object.');
    return v.result();
  }
  checkPaymentBody(v, request, { required: PAYMENT_REQUIRED, methods: ['auth', 'purchase'] }, options);
  return v.result();
}
