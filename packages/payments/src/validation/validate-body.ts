import { validateCard } from './card.js';
import { checkAmount, checkInteger, checkString, type Format, type StringRule } from './checks.js';
import { isEmail, isHttpUrl, isIpAddress, isIsoDate, isUuid } from './formats.js';
import { checkInitRecurring } from './validate-recurring.js';
import { isAbsent, isPlainObject, type ValidationOptions, type Violations } from './violations.js';

const URL_FORMAT: Format = [isHttpUrl, 'format.url', 'an absolute http(s) URL'];
const CARD_FIELDS = ['cc_number', 'exp_month', 'exp_year', 'card_cvv', 'cc_cvv'] as const;
const PLAIN_STRINGS = ['customer_id', 'customer_fname', 'customer_lname', 'customer_patronym'] as const;
const MORE_STRINGS = ['customer_phone', 'customer_lang', 'customer_tax_id', 'payway'] as const;

export interface BodyRules {
  required: readonly string[];
  methods: readonly string[];
}

function has(body: Record<string, unknown>, key: string): boolean {
  return !isAbsent(body[key]) && body[key] !== '';
}

/** Product objects: their fields are not shown by the spec. */
export function checkProducts(v: Violations, value: unknown, field: string): void {
  if (isAbsent(value)) return;
  if (!Array.isArray(value)) {
    v.add(field, 'type', `${field} must be an array.`);
    return;
  }
  value.forEach((item, index) => {
    if (!isPlainObject(item)) v.add(`${field}[${index}]`, 'type', `${field}[${index}] must be an object.`);
  });
}

function checkFingerprint(v: Violations, value: unknown): void {
  if (isAbsent(value)) return;
  if (!isPlainObject(value)) {
    v.add('browser_fingerprint', 'type', 'browser_fingerprint must be an object.');
    return;
  }
  for (const [key, member] of Object.entries(value)) {
    const field = `browser_fingerprint.${key}`;
    if (typeof member !== 'string') v.add(field, 'type', `${field} must be a string.`);
  }
}

function checkMcc(v: Violations, value: unknown): void {
  if (isAbsent(value)) return;
  const ok =
    (typeof value === 'string' && /^\d{4}$/.test(value)) ||
    (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 9999);
  if (!ok) v.add('merchant_mcc', 'format.mcc', 'merchant_mcc must be a 4-digit merchant category code.');
}

function checkDirectCard(v: Violations, body: Record<string, unknown>, options: ValidationOptions): void {
  const hasCard = CARD_FIELDS.some((key) => !isAbsent(body[key]));
  if (!isAbsent(body.cc_token)) {
    const token = checkString(v, body, 'cc_token', '', {
      format: [(t) => t.replace(/^rcr:/, '') !== '', 'format.token', 'a non-empty token'],
    });
    if (token !== undefined && hasCard) {
      v.add('cc_token', 'card.conflict', 'send either cc_token or the card fields, not both.');
    }
    return;
  }
  // A wallet payment (Apple Pay, Google Pay): the cryptogram carries the card data (spec 4.1 lists it as a
  // direct field). Its members are not shown, so any non-empty object passes.
  if (!hasCard && isPlainObject(body.cryptogram) && Object.keys(body.cryptogram).length > 0) return;
  if (!hasCard) {
    for (const key of ['cc_number', 'exp_month', 'exp_year', 'card_cvv']) {
      v.add(
        key,
        'required',
        `direct mode requires ${key}, or cc_token or a wallet cryptogram instead of the card fields.`,
      );
    }
    return;
  }
  v.list.push(...validateCard(body, { now: options.now }).violations);
}

function checkHostedHasNoCard(v: Violations, body: Record<string, unknown>): void {
  for (const key of [...CARD_FIELDS, 'cc_token']) {
    if (!isAbsent(body[key])) {
      v.add(key, 'not_allowed', `${key} is direct-mode card data: the hosted checkout collects the card.`);
    }
  }
}

function checkSector(
  v: Violations,
  body: Record<string, unknown>,
  mode: unknown,
  sector: string | undefined,
): void {
  const names = () => {
    for (const key of ['customer_fname', 'customer_lname']) {
      if (!has(body, key))
        v.add(key, 'required', `${key} is required for ${sector} merchants in hosted mode.`);
    }
  };
  if (sector === 'microfinance') {
    if (!has(body, 'customer_birthday') && !has(body, 'customer_tax_id')) {
      v.add(
        'customer_birthday',
        'required_one_of',
        'microfinance merchants must send customer_birthday or customer_tax_id.',
      );
    }
    if (mode === 'hosted') names();
    const over = typeof body.amount === 'number' && body.amount > 30_000 && body.currency === 'UAH';
    if (over && !has(body, 'customer_tax_id')) {
      v.add(
        'customer_tax_id',
        'required',
        'customer_tax_id is required above 30 000 UAH for microfinance merchants.',
      );
    }
  }
  if (sector === 'igaming' && mode === 'hosted') names();
}

type RequiredRule = (key: string) => StringRule;

/** Returns `mode` when it is valid. */
function checkOrderFields(
  v: Violations,
  body: Record<string, unknown>,
  rules: BodyRules,
  rule: RequiredRule,
): string | undefined {
  checkString(v, body, 'pos_id', '', { ...rule('pos_id'), format: [isUuid, 'format.uuid', 'a UUID'] });
  const mode = checkString(v, body, 'mode', '', { ...rule('mode'), oneOf: ['direct', 'hosted'] });
  checkString(v, body, 'method', '', { ...rule('method'), oneOf: rules.methods });
  checkAmount(v, body.amount, 'amount', rule('amount').required === true);
  checkString(v, body, 'currency', '', {
    ...rule('currency'),
    format: [(t) => /^[A-Z]{3}$/.test(t), 'format.currency', 'an ISO 4217 code of 3 capital letters'],
  });
  checkString(v, body, 'description', '', { ...rule('description'), maxLength: 2048 });
  checkString(v, body, 'order_id', '', { ...rule('order_id'), maxLength: 256 });
  // Any string: the spec leaves the list open (2.3); `supported`, `always` and `never` are the values seen.
  checkString(v, body, 'order_3ds_bypass', '', rule('order_3ds_bypass'));
  for (const key of [...PLAIN_STRINGS, ...MORE_STRINGS]) checkString(v, body, key, '', rule(key));
  return mode;
}

function checkCustomerFields(
  v: Violations,
  body: Record<string, unknown>,
  rule: RequiredRule,
  mode: string | undefined,
): void {
  checkString(v, body, 'customer_email', '', {
    ...rule('customer_email'),
    format: [isEmail, 'format.email', 'an email address'],
  });
  checkString(v, body, 'customer_ip', '', {
    ...rule('customer_ip'),
    format: [isIpAddress, 'format.ip', 'an IPv4 or IPv6 address'],
  });
  checkString(v, body, 'customer_country', '', {
    ...rule('customer_country'),
    format: [
      (t) => /^[A-Z]{2}$/.test(t),
      'format.country',
      'an ISO 3166-1 alpha-2 code of 2 capital letters',
    ],
  });
  checkString(v, body, 'customer_birthday', '', {
    ...rule('customer_birthday'),
    format: [isIsoDate, 'format.date', 'a real date written yyyy-MM-dd'],
  });
  for (const key of ['customer_referrer', 'server_url', 'result_url']) {
    checkString(v, body, key, '', { ...rule(key), format: URL_FORMAT });
  }
  // Spec 4.1 types validation_url String in direct mode and URL in hosted mode.
  checkString(v, body, 'validation_url', '', {
    ...rule('validation_url'),
    ...(mode === 'direct' ? {} : { format: URL_FORMAT }),
  });
  checkString(v, body, 'payload', '', { ...rule('payload'), maxLength: 4000 });
}

function checkCryptogram(v: Violations, cryptogram: unknown): void {
  if (!isAbsent(cryptogram) && !isPlainObject(cryptogram)) {
    v.add('cryptogram', 'type', 'cryptogram must be an object.');
  } else if (isPlainObject(cryptogram) && Object.keys(cryptogram).length === 0) {
    v.add('cryptogram', 'required', 'cryptogram is empty: send the wallet cryptogram parameters.');
  }
}

function checkRecurringPurchase(v: Violations, body: Record<string, unknown>): void {
  if (isAbsent(body.init_recurring)) return;
  checkInitRecurring(v, body.init_recurring, 'init_recurring');
  if (typeof body.method === 'string' && body.method !== '' && body.method !== 'purchase') {
    v.add(
      'method',
      'recurring.method',
      'init_recurring needs method purchase: subscriptions are one-step payments.',
    );
  }
}

/**
 * The rules of a payment body shared by `/payment` and `/split/purchase` (spec 4.1, 4.2, 8): required fields,
 * types and formats, card data or token in direct mode, sector rules and `init_recurring`.
 */
export function checkPaymentBody(
  v: Violations,
  body: Record<string, unknown>,
  rules: BodyRules,
  options: ValidationOptions,
): void {
  const required = new Set(rules.required);
  const rule: RequiredRule = (key) => ({ required: required.has(key) });
  const mode = checkOrderFields(v, body, rules, rule);
  checkCustomerFields(v, body, rule, mode);
  checkMcc(v, body.merchant_mcc);
  checkInteger(v, body.order_timeout, 'order_timeout', { min: 1 });
  checkProducts(v, body.products, 'products');
  checkFingerprint(v, body.browser_fingerprint);
  checkCryptogram(v, body.cryptogram);
  if (mode === 'direct') checkDirectCard(v, body, options);
  if (mode === 'hosted') checkHostedHasNoCard(v, body);
  checkSector(v, body, mode, options.sector);
  checkRecurringPurchase(v, body);
}
