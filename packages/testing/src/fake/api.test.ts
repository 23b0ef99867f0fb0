import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mockPaymentApi, type PaymentApiMock } from '../nock.js';

const BASE_URL = 'https://api.payments.test';
const SECRET = 'merchant-webhook-secret';

describe('the fake API checks credentials, the media type and the route before anything else', () => {
  let api: PaymentApiMock;

  beforeEach(() => {
    api = mockPaymentApi({ baseUrl: BASE_URL, secret: SECRET, now: '2026-03-02T10:00:00Z', seed: 42 });
  });

  afterEach(() => api.restore());

  it('answers 401 with the service body to a wrong endpoints key and to a malformed X-API-AUTH', async () => {
    const body = JSON.stringify({ pos_id: api.project.posId });
    const variants: Record<string, string>[] = [
      { ...api.headers(), 'x-api-key': 'wrong' },
      { ...api.headers(), 'x-api-auth': `Bearer ${api.project.apiKey}` },
      { 'content-type': 'application/json' },
    ];
    for (const headers of variants) {
      const response = await fetch(`${BASE_URL}/api/v1/payment`, { method: 'POST', headers, body });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({
        message: 'Invalid pos_id field or credentials',
        args: { code: 'S-404' },
      });
    }
    expect(api.isDone({ expectRefusals: [401] })).toBe(true);
  });

  it('lets a test verify SIGNATURE through verifyAuth', async () => {
    api.restore();
    api = mockPaymentApi({
      baseUrl: BASE_URL,
      secret: SECRET,
      seed: 3,
      verifyAuth: ({ signature, body }) => signature === `len${body.length}`,
    });
    const body = '{}';
    const refused = await fetch(`${BASE_URL}/api/v1/payment`, {
      method: 'POST',
      headers: api.headers(undefined, 'len99'),
      body,
    });
    expect(refused.status).toBe(401);
    const accepted = await fetch(`${BASE_URL}/api/v1/payment`, {
      method: 'POST',
      headers: api.headers(undefined, `len${body.length}`),
      body,
    });
    expect(accepted.status).toBe(400);
  });

  it('answers 415 without a JSON type, 400 for malformed JSON, and 404 for an unknown route', async () => {
    const noType = await fetch(`${BASE_URL}/api/v1/payment`, {
      method: 'POST',
      headers: { ...api.headers(), 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(noType.status).toBe(415);
    expect(await noType.json()).toEqual({
      message: 'Content-Type must be application/json.',
      args: { code: 'R-415' },
    });
    const malformed = await fetch(`${BASE_URL}/api/v1/payment`, {
      method: 'POST',
      headers: api.headers(),
      body: '{"a":',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({
      message: 'The body is not valid JSON.',
      args: { code: 'R-400' },
    });
    const unknown = await fetch(`${BASE_URL}/api/v1/nothing`, { headers: api.headers() });
    expect(unknown.status).toBe(404);
    expect(() => api.done()).toThrow('GET /api/v1/nothing answered 404');
  });
});
