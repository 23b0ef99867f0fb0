import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockPaymentApi, type PaymentApiMock } from '../nock.js';
import type { FakeServiceError } from './errors.js';
import type { FakeProject } from './projects.js';
import { FakeService } from './service.js';

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

function hostedBody(project: FakeProject): Body {
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
  const base = mode === 'direct' ? direct(project) : hostedBody(project);
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

interface ErrorBody {
  message: string;
  args: { code: string; violations: Array<{ field: string; code: string; message: string }> };
}

async function refusedFields(response: Response): Promise<string[]> {
  expect(response.status).toBe(400);
  const body = (await response.json()) as ErrorBody;
  expect([body.message, body.args.code]).toEqual(['The request is invalid: see args.violations.', 'V-400']);
  return body.args.violations.map((v) => v.field).sort();
}

// Each rule is pinned once, in core (packages/core/src/validation/*.test.ts); these tests pin only
// what the fake adds: the route, the project and the clock it validates with, and how a refusal is answered.
describe("the fake API runs core's validators and answers a refusal as the service does", () => {
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

  it('answers 400 V-400 with every violation in args.violations, each with a code and a message without the card', async () => {
    const response = await post(projects.plain, '/api/v1/payment', {
      ...direct(projects.plain),
      amount: 0,
      cc_number: '4242424242424241',
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.message).toBe('The request is invalid: see args.violations.');
    expect(body.args.code).toBe('V-400');
    expect(body.args.violations.map((v) => [v.field, v.code])).toEqual([
      ['amount', 'amount.invalid'],
      ['cc_number', 'card.luhn'],
    ]);
    for (const violation of body.args.violations) {
      expect(violation.message).not.toBe('');
      expect(violation.message).not.toContain('4242424242424241');
    }
  });

  it("validates with the project's sector: a microfinance project refuses what a plain one accepts", async () => {
    expect((await post(projects.plain, '/api/v1/payment', direct(projects.plain))).status).toBe(200);
    const refused = await post(projects.microfinance, '/api/v1/payment', direct(projects.microfinance));
    expect(await refusedFields(refused)).toEqual(['customer_birthday']);
    const hosted = hostedBody(projects.igaming);
    expect(await refusedFields(await post(projects.igaming, '/api/v1/payment', hosted))).toEqual([
      'customer_fname',
      'customer_lname',
    ]);
  });

  it('validates /split/purchase as a split purchase, and answers a valid hosted one with 303', async () => {
    const body = split(projects.plain, 'hosted');
    expect((await post(projects.plain, '/api/v1/split/purchase', body)).status).toBe(303);
    const partial = without(split(projects.plain, 'hosted'), 'order_3ds_bypass', 'customer_email');
    expect(await refusedFields(await post(projects.plain, '/api/v1/split/purchase', partial))).toEqual([
      'customer_email',
      'order_3ds_bypass',
    ]);
  });

  it('takes optional fields sent empty as not sent; strict refuses them, and a required one stays required', () => {
    const empties = {
      customer_email: '',
      customer_ip: '',
      customer_country: '',
      customer_birthday: '',
      customer_phone: '',
      server_url: '',
      result_url: '',
      merchant_mcc: '',
      order_timeout: '',
      payload: '',
      products: [],
    };
    const lenient = new FakeService({ secret: 'empty', seed: 6, now: '2026-03-01T10:00:00Z' });
    const created = lenient.createPayment({ ...hostedBody(lenient.project), ...empties });
    expect(created.mode).toBe('hosted');
    const strict = new FakeService({ secret: 'empty', seed: 6, now: '2026-03-01T10:00:00Z', strict: true });
    const violations = (body: Body, options?: { split: boolean }) => {
      try {
        strict.createPayment(body, options);
        return [];
      } catch (error) {
        return (error as FakeServiceError).violations.map((v) => `${v.field} ${v.code}`);
      }
    };
    expect(violations({ ...hostedBody(strict.project), ...empties })).toEqual([
      'customer_email format.email',
      'customer_ip format.ip',
      'customer_country format.country',
      'customer_birthday format.date',
      'server_url format.url',
      'result_url format.url',
      'merchant_mcc format.mcc',
    ]);
    try {
      lenient.createPayment({ ...split(lenient.project, 'hosted'), customer_email: '' }, { split: true });
      expect.unreachable();
    } catch (error) {
      expect((error as FakeServiceError).violations.map((v) => `${v.field} ${v.code}`)).toEqual([
        'customer_email required',
      ]);
    }
  });

  it('judges card expiry by the fake clock, not the wall clock', () => {
    const fake = new FakeService({ secret: 'later', now: '2031-06-01T00:00:00Z', seed: 4 });
    const body = { ...direct(fake.project), exp_month: 12, exp_year: 2030 };
    try {
      fake.createPayment(body);
      expect.unreachable();
    } catch (error) {
      expect((error as FakeServiceError).violations.map((v) => [v.field, v.code])).toEqual([
        ['exp_year', 'card.expired'],
      ]);
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
