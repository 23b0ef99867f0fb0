import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockPaymentApi, type PaymentApiMock } from '../nock.js';
import type { FakeProject } from './projects.js';

const BASE_URL = 'https://validation.payments.test';
const SUB_MERCHANT = '3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b';

type Body = Record<string, unknown>;
type Sector = 'plain' | 'microfinance' | 'igaming';

let api: PaymentApiMock;
let projects: Record<Sector, FakeProject>;
let counter = 0;

function direct(project: FakeProject): Body {
  return {
    pos_id: project.posId,
    mode: 'direct',
    method: 'purchase',
    amount: 10.5,
    currency: 'XTS',
    description: 'Validation',
    order_id: `order-${++counter}`,
    cc_number: '4242424242424242',
    exp_month: 12,
    exp_year: 2030,
    card_cvv: '123',
    customer_ip: '198.51.100.4',
  };
}

function hosted(project: FakeProject): Body {
  return {
    pos_id: project.posId,
    mode: 'hosted',
    method: 'purchase',
    amount: 10.5,
    currency: 'XTS',
    description: 'Validation',
    order_id: `order-${++counter}`,
  };
}

function split(project: FakeProject, mode: 'direct' | 'hosted'): Body {
  const base = mode === 'direct' ? direct(project) : hosted(project);
  return {
    ...base,
    order_3ds_bypass: 'supported',
    customer_email: 'buyer@example.com',
    customer_phone: '+380501234567',
    ...(mode === 'direct' ? { customer_fname: 'Olena', customer_lname: 'Shevchenko' } : {}),
    split: [
      { amount: 6, sub_merchant_id: SUB_MERCHANT },
      { amount: 4.5, sub_merchant_id: SUB_MERCHANT },
    ],
  };
}

function without(body: Body, ...keys: string[]): Body {
  const copy = { ...body };
  for (const key of keys) delete copy[key];
  return copy;
}

async function post(project: FakeProject, path: string, body: Body): Promise<Response> {
  return fetch(`${BASE_URL}${path}`, {
    method: 'POST',
    headers: api.headers(project),
    redirect: 'manual',
    body: JSON.stringify(body),
  });
}

const recurring = (init: Body) => (p: FakeProject) => ({
  ...direct(p),
  init_recurring: { interval_unit: 'month', interval_count: 1, ...init },
});

interface Row {
  rule: string;
  sector?: Sector;
  path?: '/api/v1/payment' | '/api/v1/split/purchase';
  body: (project: FakeProject) => Body;
  fields: string[];
}

// Every rule of spec parts 4 and 8, each refused with the violated field named.
const ROWS: Row[] = [
  { rule: 'amount is positive', body: (p) => ({ ...direct(p), amount: 0 }), fields: ['amount'] },
  { rule: 'amount is not negative', body: (p) => ({ ...direct(p), amount: -5 }), fields: ['amount'] },
  {
    rule: 'amount has at most 2 decimals',
    body: (p) => ({ ...direct(p), amount: 10.123 }),
    fields: ['amount'],
  },
  {
    rule: 'payload is at most 4000 characters',
    body: (p) => ({ ...direct(p), payload: 'x'.repeat(4001) }),
    fields: ['payload'],
  },
  {
    rule: 'order_id is at most 256 characters',
    body: (p) => ({ ...direct(p), order_id: 'o'.repeat(257) }),
    fields: ['order_id'],
  },
  {
    rule: 'description is at most 2048 characters',
    body: (p) => ({ ...direct(p), description: 'd'.repeat(2049) }),
    fields: ['description'],
  },
  { rule: 'mode is direct or hosted', body: (p) => ({ ...direct(p), mode: 'iframe' }), fields: ['mode'] },
  {
    rule: 'method is auth or purchase',
    body: (p) => ({ ...direct(p), method: 'credit' }),
    fields: ['method'],
  },
  {
    rule: 'currency is an ISO 4217 code',
    body: (p) => ({ ...direct(p), currency: 'hryvnia' }),
    fields: ['currency'],
  },
  { rule: 'pos_id is required', body: (p) => without(direct(p), 'pos_id'), fields: ['pos_id'] },
  { rule: 'order_id is required', body: (p) => without(direct(p), 'order_id'), fields: ['order_id'] },
  {
    rule: 'direct mode needs the card or a token',
    body: (p) => without(direct(p), 'cc_number', 'exp_month', 'exp_year', 'card_cvv'),
    fields: ['cc_number', 'exp_month', 'exp_year', 'card_cvv'],
  },
  {
    rule: 'the card number passes Luhn',
    body: (p) => ({ ...direct(p), cc_number: '4242424242424241' }),
    fields: ['cc_number'],
  },
  {
    rule: 'the card number holds digits only',
    body: (p) => ({ ...direct(p), cc_number: '4242 4242 4242 4242' }),
    fields: ['cc_number'],
  },
  {
    rule: 'the card has not expired',
    body: (p) => ({ ...direct(p), exp_month: 1, exp_year: 2026 }),
    fields: ['exp_year'],
  },
  { rule: 'exp_month is 1 to 12', body: (p) => ({ ...direct(p), exp_month: 13 }), fields: ['exp_month'] },
  {
    rule: 'card_cvv holds digits only',
    body: (p) => ({ ...direct(p), card_cvv: '12a' }),
    fields: ['card_cvv'],
  },
  {
    rule: 'cc_cvv holds digits only',
    body: (p) => ({ ...without(direct(p), 'card_cvv'), cc_cvv: '1 3' }),
    fields: ['cc_cvv'],
  },
  {
    rule: 'a token replaces the card, not both',
    body: (p) => ({ ...direct(p), cc_token: 'tok_1' }),
    fields: ['cc_token'],
  },
  {
    rule: 'hosted mode takes no card data',
    body: (p) => ({ ...hosted(p), cc_number: '4242424242424242' }),
    fields: ['cc_number'],
  },
  {
    rule: 'customer_country is alpha-2',
    body: (p) => ({ ...direct(p), customer_country: 'UKR' }),
    fields: ['customer_country'],
  },
  {
    rule: 'customer_birthday is yyyy-MM-dd',
    body: (p) => ({ ...direct(p), customer_birthday: '01.02.1990' }),
    fields: ['customer_birthday'],
  },
  {
    rule: 'server_url is a URL',
    body: (p) => ({ ...direct(p), server_url: 'not a url' }),
    fields: ['server_url'],
  },
  {
    rule: 'result_url is a URL',
    body: (p) => ({ ...direct(p), result_url: 'ftp://x' }),
    fields: ['result_url'],
  },
  {
    rule: 'microfinance: customer_birthday or customer_tax_id',
    sector: 'microfinance',
    body: (p) => direct(p),
    fields: ['customer_birthday'],
  },
  {
    rule: 'microfinance hosted: customer_fname and customer_lname',
    sector: 'microfinance',
    body: (p) => ({ ...hosted(p), customer_birthday: '1990-02-01' }),
    fields: ['customer_fname', 'customer_lname'],
  },
  {
    rule: 'microfinance above 30 000 UAH: customer_tax_id',
    sector: 'microfinance',
    body: (p) => ({ ...direct(p), amount: 30_000.01, currency: 'UAH', customer_birthday: '1990-02-01' }),
    fields: ['customer_tax_id'],
  },
  {
    rule: 'iGaming hosted: customer_fname and customer_lname',
    sector: 'igaming',
    body: (p) => hosted(p),
    fields: ['customer_fname', 'customer_lname'],
  },
  {
    rule: 'split direct: the required fields of 4.2',
    path: '/api/v1/split/purchase',
    body: (p) =>
      without(
        split(p, 'direct'),
        'order_3ds_bypass',
        'customer_fname',
        'customer_lname',
        'customer_email',
        'customer_phone',
        'customer_ip',
        'split',
      ),
    fields: [
      'order_3ds_bypass',
      'customer_fname',
      'customer_lname',
      'customer_email',
      'customer_phone',
      'customer_ip',
      'split',
    ],
  },
  {
    rule: 'split hosted: the required fields of 4.2',
    path: '/api/v1/split/purchase',
    body: (p) => without(split(p, 'hosted'), 'order_3ds_bypass', 'customer_email', 'customer_phone'),
    fields: ['order_3ds_bypass', 'customer_email', 'customer_phone'],
  },
  {
    rule: 'split: method purchase only',
    path: '/api/v1/split/purchase',
    body: (p) => ({ ...split(p, 'hosted'), method: 'auth' }),
    fields: ['method'],
  },
  {
    rule: 'split item amount: positive, at most 2 decimals; sub_merchant_id a UUID',
    path: '/api/v1/split/purchase',
    body: (p) => ({
      ...split(p, 'hosted'),
      split: [
        { amount: 6.001, sub_merchant_id: SUB_MERCHANT },
        { amount: 0, sub_merchant_id: 'merchant-2' },
      ],
    }),
    fields: ['split[0].amount', 'split[1].amount', 'split[1].sub_merchant_id'],
  },
  {
    rule: 'init_recurring needs interval_unit and interval_count',
    body: (p) => ({ ...direct(p), init_recurring: {} }),
    fields: ['init_recurring.interval_unit', 'init_recurring.interval_count'],
  },
  {
    rule: 'interval_unit is day/week/month/quarter/year',
    body: recurring({ interval_unit: 'fortnight' }),
    fields: ['init_recurring.interval_unit'],
  },
  {
    rule: 'interval_count is at most 30',
    body: recurring({ interval_count: 31 }),
    fields: ['init_recurring.interval_count'],
  },
  {
    rule: 'retry_attempts is at most 7',
    body: recurring({ retry_attempts: 8 }),
    fields: ['init_recurring.retry_attempts'],
  },
  {
    rule: 'retry_interval_hours is at most 23 for day',
    body: recurring({ interval_unit: 'day', retry_interval_hours: 24 }),
    fields: ['init_recurring.retry_interval_hours'],
  },
  {
    rule: 'retry_interval_hours is at most 72 otherwise',
    body: recurring({ retry_interval_hours: 73 }),
    fields: ['init_recurring.retry_interval_hours'],
  },
  {
    rule: 'start_date is YYYY-MM-DD',
    body: recurring({ start_date: '2026-02-30' }),
    fields: ['init_recurring.start_date'],
  },
  {
    rule: 'expiry_date is YYYY-MM-DD',
    body: recurring({ expiry_date: '31/12/2026' }),
    fields: ['init_recurring.expiry_date'],
  },
  { rule: 'time is HH:MM:SS', body: recurring({ time: '25:00:00' }), fields: ['init_recurring.time'] },
  {
    rule: 'notification_url is a URL',
    body: recurring({ notification_url: 'nope' }),
    fields: ['init_recurring.notification_url'],
  },
  {
    rule: 'recurring amount: at most 2 decimals',
    body: recurring({ amount: 1.001 }),
    fields: ['init_recurring.amount'],
  },
  { rule: 'recurring amount: positive', body: recurring({ amount: -1 }), fields: ['init_recurring.amount'] },
  {
    rule: 'subscriptions are purchases',
    body: (p) => ({ ...recurring({})(p), method: 'auth' }),
    fields: ['method'],
  },
];

describe('the fake API refuses every rule of parts 4 and 8, naming the field', () => {
  beforeAll(() => {
    api = mockPaymentApi({
      baseUrl: BASE_URL,
      now: '2026-03-01T10:00:00Z',
      seed: 99,
      transport: async () => ({ status: 200, body: '' }),
      projects: [
        { secret: 'plain' },
        { secret: 'mfo', sector: 'microfinance' },
        { secret: 'bet', sector: 'igaming' },
      ],
    });
    const [plain, microfinance, igaming] = api.fake.projects;
    projects = { plain: plain!, microfinance: microfinance!, igaming: igaming! };
  });

  afterAll(() => api.restore());

  it.each(ROWS)('$rule', async (row) => {
    const project = projects[row.sector ?? 'plain'];
    const response = await post(project, row.path ?? '/api/v1/payment', row.body(project));
    expect(response.status).toBe(400);
    const body = (await response.json()) as {
      message: string;
      args: { code: string; violations: Array<{ field: string; code: string; message: string }> };
    };
    expect(body.message).toBe('The request is invalid: see args.violations.');
    expect(body.args.code).toBe('V-400');
    expect(body.args.violations.map((v) => v.field).sort()).toEqual([...row.fields].sort());
    for (const violation of body.args.violations) {
      expect(violation.code).toMatch(/^[a-z_.]+$/);
      expect(violation.message).not.toContain('4242424242424242');
    }
  });

  it('accepts the base requests the table breaks: direct, hosted, split, subscription, cc_cvv, sectors', async () => {
    const plain = projects.plain;
    const accepted: Array<[FakeProject, string, Body, number]> = [
      [plain, '/api/v1/payment', direct(plain), 200],
      [plain, '/api/v1/payment', hosted(plain), 303],
      [plain, '/api/v1/payment', { ...without(direct(plain), 'card_cvv'), cc_cvv: '123' }, 200],
      [plain, '/api/v1/payment', recurring({ retry_interval_hours: 72 })(plain), 200],
      [plain, '/api/v1/split/purchase', split(plain, 'direct'), 200],
      [plain, '/api/v1/split/purchase', split(plain, 'hosted'), 303],
      [
        projects.microfinance,
        '/api/v1/payment',
        { ...direct(projects.microfinance), customer_tax_id: '1234567890' },
        200,
      ],
      [
        projects.igaming,
        '/api/v1/payment',
        { ...hosted(projects.igaming), customer_fname: 'A', customer_lname: 'B' },
        303,
      ],
    ];
    for (const [project, path, body, status] of accepted) {
      const response = await post(project, path, body);
      expect([path, response.status]).toEqual([path, status]);
    }
  });

  it('echoes a split purchase with its split and never the card', async () => {
    const body = split(projects.plain, 'direct');
    const response = await post(projects.plain, '/api/v1/split/purchase', body);
    const text = await response.text();
    expect(text).not.toContain('4242424242424242');
    expect(JSON.parse(text)).toMatchObject({
      order_id: body.order_id,
      method: 'purchase',
      status: 'success',
      status_code: '1000',
      split: body.split,
      cc_mask: '424242******4242',
    });
  });

  it('refuses a repeated order_id of the same project with P-409, and allows it in another project', async () => {
    const first = direct(projects.plain);
    expect((await post(projects.plain, '/api/v1/payment', first)).status).toBe(200);
    const again = await post(projects.plain, '/api/v1/payment', {
      ...direct(projects.plain),
      order_id: first.order_id,
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({
      message: 'A payment with this order_id already exists for this project.',
      args: { code: 'P-409' },
    });
    const other = { ...direct(projects.igaming), order_id: first.order_id };
    expect((await post(projects.igaming, '/api/v1/payment', other)).status).toBe(200);
  });

  it('refuses a body pos_id of another project like bad credentials', async () => {
    const response = await post(projects.plain, '/api/v1/payment', direct(projects.igaming));
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      message: 'Invalid pos_id field or credentials',
      args: { code: 'S-404' },
    });
  });
});

describe('mockPaymentApi({ splitSum })', () => {
  it('refuses split amounts that do not add up to amount by default, and accepts fewer with at_most', async () => {
    const answers: number[] = [];
    for (const splitSum of [undefined, 'at_most'] as const) {
      api = mockPaymentApi({
        baseUrl: BASE_URL,
        secret: 'split-sum',
        seed: 12,
        transport: async () => ({ status: 200, body: '' }),
        ...(splitSum ? { splitSum } : {}),
      });
      try {
        const response = await post(api.project, '/api/v1/split/purchase', {
          ...split(api.project, 'hosted'),
          amount: 20,
        });
        answers.push(response.status);
      } finally {
        api.restore();
      }
    }
    expect(answers).toEqual([400, 303]);
  });
});
