import { describe, expect, it } from 'vitest';
import type { PaymentRequest } from './requests.js';
import { validatePaymentRequest } from './validate.js';
import type { ValidationOptions } from './violations.js';

const now = new Date('2026-11-22T12:00:00Z');
const POS = 'c2b6d5ae-3c8f-4e2b-9a7d-1f0e5b4c3a21';
const base = {
  pos_id: POS,
  method: 'purchase',
  amount: 100.5,
  currency: 'UAH',
  description: 'Order 1',
  order_id: 'o-1',
};
const card = { cc_number: '4111111111111111', exp_month: 12, exp_year: 2030, card_cvv: '123' };
const direct: Record<string, unknown> = { ...base, mode: 'direct', ...card };
const hosted: Record<string, unknown> = { ...base, mode: 'hosted' };
type Pair = { field: string; code: string };

const codes = (request: unknown, options: ValidationOptions = {}): Pair[] =>
  validatePaymentRequest(request, { now, ...options }).violations.map(({ field, code }) => ({ field, code }));
const without = (request: Record<string, unknown>, ...keys: string[]) =>
  Object.fromEntries(Object.entries(request).filter(([key]) => !keys.includes(key)));

describe('validatePaymentRequest', () => {
  it('accepts a whole direct request with card data, and a hosted one', () => {
    expect(validatePaymentRequest(direct, { now })).toEqual({ valid: true, violations: [] });
    expect(validatePaymentRequest(hosted, { now })).toEqual({ valid: true, violations: [] });
  });

  it('accepts a request written against the PaymentRequest type with its required fields only', () => {
    const typed: PaymentRequest = {
      pos_id: POS,
      mode: 'direct',
      method: 'auth',
      amount: 1,
      currency: 'XTS',
      description: 'd',
      order_id: 'o',
      cc_token: 'rcr:tok',
    };
    expect(codes(typed)).toEqual([]);
  });

  it.each([null, [], 'x', 42])('refuses a body that is not an object: %j', (body) => {
    expect(codes(body)).toEqual([{ field: '', code: 'type' }]);
  });

  it('keeps unknown fields: the service grows fields', () => {
    expect(codes({ ...hosted, brand_new_field: { any: 'thing' } })).toEqual([]);
  });

  it.each(['pos_id', 'mode', 'method', 'amount', 'currency', 'description', 'order_id'])(
    'requires %s, missing, null or empty',
    (field) => {
      expect(codes(without(hosted, field))).toEqual([{ field, code: 'required' }]);
      expect(codes({ ...hosted, [field]: null })).toEqual([{ field, code: 'required' }]);
      expect(codes({ ...hosted, [field]: '' })).toEqual([{ field, code: 'required' }]);
    },
  );

  it('reports every violation, not just the first', () => {
    expect(codes({ mode: 'hosted', amount: 1.001, currency: 'uah', payload: 'x'.repeat(4001) })).toEqual([
      { field: 'pos_id', code: 'required' },
      { field: 'method', code: 'required' },
      { field: 'amount', code: 'amount.invalid' },
      { field: 'currency', code: 'format.currency' },
      { field: 'description', code: 'required' },
      { field: 'order_id', code: 'required' },
      { field: 'payload', code: 'max_length' },
    ]);
  });

  describe.each<[string, Record<string, unknown>, string, string]>([
    ['pos_id not a UUID', { pos_id: 'pos-1' }, 'pos_id', 'format.uuid'],
    ['pos_id a number', { pos_id: 7 }, 'pos_id', 'type'],
    ['mode unknown', { mode: 'iframe' }, 'mode', 'enum'],
    ['method capture', { method: 'capture' }, 'method', 'enum'],
    ['amount zero', { amount: 0 }, 'amount', 'amount.invalid'],
    ['amount negative', { amount: -5 }, 'amount', 'amount.invalid'],
    ['amount with 3 decimals', { amount: 10.005 }, 'amount', 'amount.invalid'],
    ['amount a float sum', { amount: 0.1 + 0.2 }, 'amount', 'amount.invalid'],
    ['amount a string', { amount: '10.50' }, 'amount', 'type'],
    ['currency of 4 letters', { currency: 'UAHX' }, 'currency', 'format.currency'],
    ['currency lower case', { currency: 'usd' }, 'currency', 'format.currency'],
    ['description over 2048', { description: 'd'.repeat(2049) }, 'description', 'max_length'],
    ['order_id over 256', { order_id: 'o'.repeat(257) }, 'order_id', 'max_length'],
    ['payload over 4000', { payload: 'p'.repeat(4001) }, 'payload', 'max_length'],
    ['payload of 2001 emoji (4002 UTF-16 units)', { payload: '😀'.repeat(2001) }, 'payload', 'max_length'],
    ['payload an object', { payload: { a: 1 } }, 'payload', 'type'],
    ['customer_country of 3 letters', { customer_country: 'UKR' }, 'customer_country', 'format.country'],
    ['customer_birthday not real', { customer_birthday: '1990-02-30' }, 'customer_birthday', 'format.date'],
    ['customer_birthday dd.MM.yyyy', { customer_birthday: '01.02.1990' }, 'customer_birthday', 'format.date'],
    ['customer_email without @', { customer_email: 'joe.example.com' }, 'customer_email', 'format.email'],
    ['customer_ip not an IP', { customer_ip: '300.1.1.1' }, 'customer_ip', 'format.ip'],
    ['customer_fname a number', { customer_fname: 5 }, 'customer_fname', 'type'],
    ['server_url relative', { server_url: '/hooks' }, 'server_url', 'format.url'],
    ['result_url ftp', { result_url: 'ftp://shop.example/done' }, 'result_url', 'format.url'],
    ['customer_referrer text', { customer_referrer: 'google' }, 'customer_referrer', 'format.url'],
    ['validation_url javascript:', { validation_url: 'javascript:alert(1)' }, 'validation_url', 'format.url'],
    ['order_3ds_bypass a number', { order_3ds_bypass: 1 }, 'order_3ds_bypass', 'type'],
    ['browser_fingerprint a string', { browser_fingerprint: 'x' }, 'browser_fingerprint', 'type'],
    [
      'browser_fingerprint member a number',
      { browser_fingerprint: { browserLanguage: 'uk', browserColorDepth: 24 } },
      'browser_fingerprint.browserColorDepth',
      'type',
    ],
    ['cryptogram an array', { cryptogram: [] }, 'cryptogram', 'type'],
    ['cryptogram empty', { cryptogram: {} }, 'cryptogram', 'required'],
    ['products an object', { products: {} }, 'products', 'type'],
    ['products item a string', { products: [{ name: 'a' }, 'b'] }, 'products[1]', 'type'],
    ['order_timeout zero', { order_timeout: 0 }, 'order_timeout', 'min'],
    ['order_timeout fractional', { order_timeout: 1.5 }, 'order_timeout', 'integer'],
    ['order_timeout a string', { order_timeout: '60' }, 'order_timeout', 'type'],
    ['merchant_mcc of 3 digits', { merchant_mcc: '599' }, 'merchant_mcc', 'format.mcc'],
  ])('%s', (_name, change, field, code) => {
    it('is refused with exactly that violation', () =>
      expect(codes({ ...hosted, ...change })).toEqual([{ field, code }]));
  });

  describe.each<[string, Record<string, unknown>]>([
    ['the test currency XTS', { currency: 'XTS' }],
    ['an integer amount', { amount: 30000 }],
    ['an amount of 1 cent', { amount: 0.01 }],
    ['a payload of exactly 4000', { payload: 'p'.repeat(4000) }],
    ['a description of exactly 2048', { description: 'd'.repeat(2048) }],
    ['an order_id of exactly 256', { order_id: 'o'.repeat(256) }],
    ['a leap-day birthday', { customer_birthday: '2000-02-29' }],
    [
      'http and https URLs',
      { server_url: 'http://127.0.0.1:3000/hooks', result_url: 'https://shop.example/done' },
    ],
    ['order_3ds_bypass supported', { order_3ds_bypass: 'supported' }],
    ['order_3ds_bypass always', { order_3ds_bypass: 'always' }],
    ['order_3ds_bypass never', { order_3ds_bypass: 'never' }],
    [
      'an order_3ds_bypass value no sample shows (the list is open, 2.3)',
      { order_3ds_bypass: 'frictionless' },
    ],
    ['an IPv6 customer_ip', { customer_ip: '2001:db8::1' }],
    ['an MCC as a number', { merchant_mcc: 5411 }],
    ['a positive order_timeout', { order_timeout: 900 }],
    ['optional fields sent as null', { server_url: null, payload: null }],
  ])('accepts %s', (_name, change) => {
    it('with no violation', () => expect(codes({ ...hosted, ...change })).toEqual([]));
  });
});

describe('validatePaymentRequest: card data by mode', () => {
  it('accepts a direct request with a token instead of the card, with or without the rcr: prefix', () => {
    const token = { ...without(direct, ...Object.keys(card)) };
    expect(codes({ ...token, cc_token: 'tok_abc' })).toEqual([]);
    expect(codes({ ...token, cc_token: 'rcr:tok_abc' })).toEqual([]);
  });

  it('accepts a wallet payment: a direct request whose cryptogram replaces the card (Apple Pay, Google Pay)', () => {
    const wallet = {
      ...without(direct, ...Object.keys(card)),
      cryptogram: { type: 'apple_pay', data: 'eyJ2' },
    };
    expect(codes(wallet)).toEqual([]);
    expect(codes({ ...wallet, cryptogram: {} })).toEqual([
      { field: 'cryptogram', code: 'required' },
      { field: 'cc_number', code: 'required' },
      { field: 'exp_month', code: 'required' },
      { field: 'exp_year', code: 'required' },
      { field: 'card_cvv', code: 'required' },
    ]);
  });

  it('refuses exp_month and exp_year sent as strings, as amount: one rule for numbers', () => {
    expect(codes({ ...direct, exp_month: '12', exp_year: '2030', amount: '100.5' })).toEqual([
      { field: 'amount', code: 'type' },
      { field: 'exp_month', code: 'type' },
      { field: 'exp_year', code: 'type' },
    ]);
  });

  it('takes validation_url as any string in direct mode (spec 4.1: String) and as a URL in hosted mode', () => {
    expect(codes({ ...direct, validation_url: 'preflight-7' })).toEqual([]);
    expect(codes({ ...hosted, validation_url: 'preflight-7' })).toEqual([
      { field: 'validation_url', code: 'format.url' },
    ]);
  });

  it('accepts the samples spelling cc_cvv', () => {
    expect(codes({ ...without(direct, 'card_cvv'), cc_cvv: '123' })).toEqual([]);
  });

  it('requires the whole card or a token in direct mode', () => {
    expect(codes(without(direct, ...Object.keys(card)))).toEqual([
      { field: 'cc_number', code: 'required' },
      { field: 'exp_month', code: 'required' },
      { field: 'exp_year', code: 'required' },
      { field: 'card_cvv', code: 'required' },
    ]);
  });

  it('names each missing part of a partial card', () => {
    expect(codes(without(direct, 'exp_year', 'card_cvv'))).toEqual([
      { field: 'exp_year', code: 'required' },
      { field: 'card_cvv', code: 'required' },
    ]);
  });

  it('validates the card in direct mode, against options.now', () => {
    expect(codes({ ...direct, cc_number: '4111111111111112', card_cvv: '12' })).toEqual([
      { field: 'cc_number', code: 'card.luhn' },
      { field: 'card_cvv', code: 'cvv.format' },
    ]);
    expect(codes({ ...direct, exp_month: 1, exp_year: 2026 })).toEqual([
      { field: 'exp_year', code: 'card.expired' },
    ]);
  });

  it('refuses a token sent together with card fields, and an empty token', () => {
    expect(codes({ ...direct, cc_token: 'tok_abc' })).toEqual([{ field: 'cc_token', code: 'card.conflict' }]);
    expect(codes({ ...without(direct, ...Object.keys(card)), cc_token: 'rcr:' })).toEqual([
      { field: 'cc_token', code: 'format.token' },
    ]);
  });

  it('refuses card data and tokens in hosted mode: the checkout collects the card', () => {
    expect(codes({ ...hosted, cc_number: '4111111111111111', cc_token: 't' })).toEqual([
      { field: 'cc_number', code: 'not_allowed' },
      { field: 'cc_token', code: 'not_allowed' },
    ]);
  });
});

describe('validatePaymentRequest: sectors', () => {
  const named = { customer_fname: 'Olena', customer_lname: 'Shevchenko' };

  it('microfinance requires customer_birthday or customer_tax_id', () => {
    expect(codes(direct, { sector: 'microfinance' })).toEqual([
      { field: 'customer_birthday', code: 'required_one_of' },
    ]);
    expect(codes({ ...direct, customer_birthday: '1990-01-31' }, { sector: 'microfinance' })).toEqual([]);
    expect(codes({ ...direct, customer_tax_id: '1234567890' }, { sector: 'microfinance' })).toEqual([]);
  });

  it('microfinance on hosted also requires the customer names', () => {
    expect(codes({ ...hosted, customer_tax_id: '1234567890' }, { sector: 'microfinance' })).toEqual([
      { field: 'customer_fname', code: 'required' },
      { field: 'customer_lname', code: 'required' },
    ]);
    expect(codes({ ...hosted, ...named, customer_tax_id: '1' }, { sector: 'microfinance' })).toEqual([]);
  });

  it('microfinance requires customer_tax_id above 30 000 UAH, not at it, not in another currency', () => {
    const adult = { ...direct, customer_birthday: '1990-01-31' };
    expect(codes({ ...adult, amount: 30000.01 }, { sector: 'microfinance' })).toEqual([
      { field: 'customer_tax_id', code: 'required' },
    ]);
    expect(codes({ ...adult, amount: 30000 }, { sector: 'microfinance' })).toEqual([]);
    expect(codes({ ...adult, amount: 50000, currency: 'EUR' }, { sector: 'microfinance' })).toEqual([]);
    expect(codes({ ...adult, amount: 50000, customer_tax_id: '1' }, { sector: 'microfinance' })).toEqual([]);
  });

  it('igaming requires the customer names on hosted only', () => {
    expect(codes(hosted, { sector: 'igaming' })).toEqual([
      { field: 'customer_fname', code: 'required' },
      { field: 'customer_lname', code: 'required' },
    ]);
    expect(codes({ ...hosted, ...named }, { sector: 'igaming' })).toEqual([]);
    expect(codes(direct, { sector: 'igaming' })).toEqual([]);
  });

  it('adds no rule for another or no sector', () => {
    expect(codes(hosted, { sector: 'retail' })).toEqual([]);
    expect(codes(hosted)).toEqual([]);
  });
});

describe('validatePaymentRequest: init_recurring', () => {
  const init = { interval_unit: 'month', interval_count: 1 };

  it('accepts a subscription on a purchase', () => {
    expect(codes({ ...hosted, init_recurring: init })).toEqual([]);
  });

  it('prefixes the subscription fields with init_recurring.', () => {
    expect(codes({ ...hosted, init_recurring: { ...init, interval_count: 31, amount: 1.234 } })).toEqual([
      { field: 'init_recurring.interval_count', code: 'max' },
      { field: 'init_recurring.amount', code: 'amount.invalid' },
    ]);
    expect(codes({ ...hosted, init_recurring: 'monthly' })).toEqual([
      { field: 'init_recurring', code: 'type' },
    ]);
  });

  it('refuses a subscription on auth: subscriptions are one-step payments', () => {
    expect(codes({ ...hosted, method: 'auth', init_recurring: init })).toEqual([
      { field: 'method', code: 'recurring.method' },
    ]);
  });
});
