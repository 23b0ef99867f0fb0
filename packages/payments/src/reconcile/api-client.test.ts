import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../core/test/servers.js';
import { replyWith, startApiService } from '../../test/api-service.js';
import { type ApiClientOptions, createApiClient } from './api-client.js';
import { ApiError } from './api-errors.js';
import { hmacRequestSigner } from './request-signer.js';

const POS = '5f0c8a4e-1b2c-4d3e-8f4a-5b6c7d8e9f0a';
const SECRETS = { apiKey: 'ak_visible', endpointsKey: 'ek_never_shown', apiSecret: 'api-secret-never-shown' };

async function failure(baseUrl: string, timeoutMs?: number): Promise<ApiError> {
  const client = createApiClient({ baseUrl, posId: POS, ...SECRETS, ...(timeoutMs ? { timeoutMs } : {}) });
  return client.resend({ orderId: 'order-1' }).then(
    () => {
      throw new Error('expected a failure');
    },
    (error: ApiError) => error,
  );
}

/** HMAC-SHA256 in lowercase hex, computed by openssl: an independent check of the signer. */
function opensslHmac(secret: string, input: string): string {
  return execFileSync('openssl', ['dgst', '-sha256', '-hmac', secret, '-r'], { input })
    .toString()
    .split(' ')[0]!;
}

function expectNoSecret(error: Error): void {
  for (const secret of [SECRETS.endpointsKey, SECRETS.apiSecret]) expect(error.message).not.toContain(secret);
  expect(error.message).not.toMatch(/[0-9a-f]{64}/);
}

describe('createApiClient().resend', () => {
  it('GETs the re-send path of 4.4 with callback=true and transactionId, and the headers of part 5', async () => {
    const record = { order_id: 'order 1/é', status: 'success' };
    const { url, seen } = await startApiService(replyWith(200, record));
    const client = createApiClient({ baseUrl: `${url}/prefix`, posId: POS, ...SECRETS });
    const answer = await client.resend({ orderId: 'order 1/é', transactionId: 'tx-1' });
    expect(answer).toEqual({ status: 200, record });
    const path = `/prefix/api/v1/pos/${POS}/orders/order%201%2F%C3%A9/purchase?callback=true&transactionId=tx-1`;
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe('GET');
    expect(seen[0]!.url).toBe(path);
    expect(seen[0]!.headers['x-api-key']).toBe(SECRETS.endpointsKey);
    // The default signature of a GET: HMAC-SHA256 of its body, the empty string, cross-checked against openssl.
    const expected = opensslHmac(SECRETS.apiSecret, '');
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
    expect(seen[0]!.headers['x-api-auth']).toBe(`SVC-HMAC-SHA256 ${SECRETS.apiKey}:${expected}`);
  });

  it('signs the raw body only by default, lowercase hex, as openssl computes it', () => {
    const body = '{"pos_id":"p","amount":9.99,"products":[]}';
    const signer = hmacRequestSigner(SECRETS.apiSecret);
    const request = { method: 'POST', path: '/api/v1/payment', apiKey: 'k' };
    expect(signer({ ...request, body })).toBe(opensslHmac(SECRETS.apiSecret, body));
    expect(signer({ ...request, method: 'GET', path: '/other', body })).toBe(
      opensslHmac(SECRETS.apiSecret, body),
    );
  });

  it('re-sends an operation (4.3) and takes an empty 2xx body as no record', async () => {
    const { url, seen } = await startApiService(replyWith(200, ''));
    const signed: string[] = [];
    const client = createApiClient({
      baseUrl: url,
      posId: POS,
      apiKey: SECRETS.apiKey,
      endpointsKey: SECRETS.endpointsKey,
      signRequest: ({ method, path, body, apiKey }) => {
        signed.push(`${method} ${path} ${JSON.stringify(body)} ${apiKey}`);
        return 'merchant-signature';
      },
    });
    expect(await client.resend({ orderId: 'o-2', operation: 'refund' })).toEqual({
      status: 200,
      record: undefined,
    });
    expect(seen[0]!.url).toBe(`/api/v1/pos/${POS}/orders/o-2/refund?callback=true`);
    expect(seen[0]!.headers['x-api-auth']).toBe('SVC-HMAC-SHA256 ak_visible:merchant-signature');
    expect(signed).toEqual([`GET /api/v1/pos/${POS}/orders/o-2/refund?callback=true "" ak_visible`]);
  });

  it('throws api.unauthorized on 401 with the service code and message, and no key or signature', async () => {
    const { url } = await startApiService(
      replyWith(401, { message: 'Invalid pos_id field or credentials', args: { code: 'S-404' } }),
    );
    const error = await failure(url);
    expect(error).toBeInstanceOf(ApiError);
    expect([error.code, error.status, error.serviceCode, error.serviceMessage]).toEqual([
      'api.unauthorized',
      401,
      'S-404',
      'Invalid pos_id field or credentials',
    ]);
    expect(error.message).toBe(
      `[@payhook/payments] GET /api/v1/pos/${POS}/orders/order-1/purchase?callback=true answered 401 (S-404: Invalid pos_id field or credentials): the likely causes are authScheme (sent "SVC", the spec's stand-in for the service's own word: set the word your service uses) and the request signature (signRequest, or apiSecret for the default HMAC-SHA256 of the body); then check apiKey, endpointsKey and posId.`,
    );
    expectNoSecret(error);
  });

  it.each([
    [404, 'api.not_found'],
    [500, 'api.server'],
    [503, 'api.server'],
    [429, 'api.refused'],
    [400, 'api.refused'],
    [302, 'api.answer_invalid'],
  ] as const)('throws on %i an ApiError with code %s', async (status, code) => {
    const { url } = await startApiService(replyWith(status, { message: 'no', args: { code: 'N-1' } }));
    const error = await failure(url);
    expect(error).toBeInstanceOf(ApiError);
    expect([error.code, error.status, error.serviceCode]).toEqual([code, status, 'N-1']);
    expectNoSecret(error);
  });

  it.each([['<html>ok</html>'], ['[1, 2]'], ['"text"']])(
    'takes a 2xx body that is not a JSON object (%s) as no record',
    async (body) => {
      const { url } = await startApiService(replyWith(200, body));
      const client = createApiClient({ baseUrl: url, posId: POS, ...SECRETS });
      expect(await client.resend({ orderId: 'o-1' })).toEqual({ status: 200, record: undefined });
    },
  );

  it('names the status alone when the error body is not the service error shape', async () => {
    const { url } = await startApiService(replyWith(502, '<html>Bad gateway</html>'));
    const error = await failure(url);
    expect(error.code).toBe('api.server');
    expect([error.serviceCode, error.serviceMessage]).toEqual([undefined, undefined]);
    expect(error.message).toBe(
      `[@payhook/payments] GET /api/v1/pos/${POS}/orders/order-1/purchase?callback=true answered 502: the service failed; ask again later.`,
    );
  });

  it('throws api.timeout when the service never answers', async () => {
    const { url } = await startApiService(() => {});
    const error = await failure(url, 50);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('api.timeout');
    expect(error.status).toBeUndefined();
    expect(error.message).toBe(
      `[@payhook/payments] GET /api/v1/pos/${POS}/orders/order-1/purchase?callback=true: no answer within 50 ms.`,
    );
  });

  it('throws api.timeout and sends nothing when signRequest never settles (a KMS that stopped answering)', async () => {
    const { url, seen } = await startApiService(replyWith(200, {}));
    const client = createApiClient({
      baseUrl: url,
      posId: POS,
      ...SECRETS,
      timeoutMs: 50,
      signRequest: () => new Promise<string>(() => {}),
    });
    const error = await client.resend({ orderId: 'order-1' }).catch((e: ApiError) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('api.timeout');
    expect((error as ApiError).message).toBe(
      `[@payhook/payments] GET /api/v1/pos/${POS}/orders/order-1/purchase?callback=true: signRequest gave no signature within 50 ms (timeoutMs); nothing was sent.`,
    );
    expect(seen).toEqual([]);
  });

  it('counts the time signRequest takes in timeoutMs', async () => {
    const { url } = await startApiService((_request, response) => {
      setTimeout(() => replyWith(200, { status: 'success' })(_request, response), 120);
    });
    const slowSigner = () => new Promise<string>((resolve) => setTimeout(() => resolve('sig'), 120));
    const client = createApiClient({
      baseUrl: url,
      posId: POS,
      ...SECRETS,
      timeoutMs: 200,
      signRequest: slowSigner,
    });
    // 120 ms signing + 120 ms answering: past the call's 200 ms, though each part alone is within it.
    const error = await client.resend({ orderId: 'order-1' }).catch((e: ApiError) => e);
    expect((error as ApiError).code).toBe('api.timeout');
  });

  it('throws api.network naming the cause when nothing listens', async () => {
    const port = await freePort();
    const error = await failure(`http://127.0.0.1:${port}`);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe('api.network');
    expect(error.message).toContain('the service could not be reached (ECONNREFUSED)');
    expectNoSecret(error);
  });

  const BASE = { baseUrl: 'https://pay.test', posId: POS, apiKey: 'ak', endpointsKey: 'ek', apiSecret: 's' };
  const URL_MESSAGE =
    'an absolute http or https URL without credentials (they belong in apiKey and endpointsKey)';

  it.each<[string, Record<string, unknown>, string]>([
    [
      'timeoutMs',
      { timeoutMs: 2 ** 31 },
      'timeoutMs must be a number of milliseconds from 1 to 2147483647, not 2147483648.',
    ],
    [
      'timeoutMs',
      { timeoutMs: 0 },
      'timeoutMs must be a number of milliseconds from 1 to 2147483647, not 0.',
    ],
    ['posId', { posId: '' }, 'posId must be a non-empty string, not an empty string.'],
    ['apiKey', { apiKey: 42 }, 'apiKey must be a non-empty string, not 42.'],
    [
      'apiKey',
      { apiKey: 'a:b' },
      'apiKey must be free of whitespace and colons (the X-API-AUTH shape), not a string of 3 characters.',
    ],
    ['endpointsKey', { endpointsKey: undefined }, 'endpointsKey must be a non-empty string, not undefined.'],
    ['signRequest', { signRequest: 'hmac' }, 'signRequest must be a function, not "hmac".'],
    ['apiSecret', { apiSecret: '' }, 'apiSecret must be a non-empty string, not an empty string.'],
    ['baseUrl', { baseUrl: 'pay.test' }, `baseUrl must be ${URL_MESSAGE}, not a string of 8 characters.`],
    [
      'baseUrl',
      { baseUrl: 'ftp://pay.test' },
      `baseUrl must be ${URL_MESSAGE}, not a string of 14 characters.`,
    ],
    [
      'baseUrl',
      { baseUrl: 'https://u:p@pay.test' },
      `baseUrl must be ${URL_MESSAGE}, not a string of 20 characters.`,
    ],
    [
      'apiSecret or signRequest',
      { apiSecret: undefined },
      'the API client needs apiSecret (for the default HMAC-SHA256 request signature) or signRequest.',
    ],
  ])('refuses a wrong %s when built, naming it and never its value: %j', (_name, options, message) => {
    expect(() => createApiClient({ ...BASE, ...options } as ApiClientOptions)).toThrow(
      new TypeError(`[@payhook/payments] ${message}`),
    );
  });

  it('hmacRequestSigner refuses an empty apiSecret, naming it', () => {
    expect(() => hmacRequestSigner('')).toThrow(
      new TypeError('[@payhook/payments] apiSecret must be a non-empty string, not an empty string.'),
    );
  });

  it.each<[string, Partial<ApiClientOptions>]>([
    ['the defaults', {}],
    [
      'a base path, signRequest and the longest timeout',
      {
        baseUrl: 'http://127.0.0.1:8080/gateway',
        apiSecret: undefined,
        signRequest: () => 'sig',
        timeoutMs: 2 ** 31 - 1,
      },
    ],
  ])('builds with %s', (_name, options) => {
    expect(typeof createApiClient({ ...BASE, ...options }).resend).toBe('function');
  });

  it('refuses an operation that is not a word, before any request', async () => {
    const { url, seen } = await startApiService(replyWith(200, {}));
    const client = createApiClient({ baseUrl: url, posId: POS, ...SECRETS });
    await expect(client.resend({ orderId: 'o', operation: '../payment' })).rejects.toThrow(
      'operation must be a word such as purchase',
    );
    await expect(client.resend({ orderId: '' })).rejects.toThrow('orderId must be a non-empty string');
    await expect(
      createApiClient({
        baseUrl: url,
        posId: POS,
        ...SECRETS,
        apiSecret: undefined,
        signRequest: () => 'a b',
      }).resend({ orderId: 'o' }),
    ).rejects.toThrow('signRequest must return a non-empty string without whitespace');
    expect(seen).toEqual([]);
  });
});

describe('createApiClient({ authScheme })', () => {
  const api = (url: string, authScheme?: string) =>
    createApiClient({
      baseUrl: url,
      posId: POS,
      ...SECRETS,
      ...(authScheme === undefined ? {} : { authScheme }),
    });
  const signature = () => opensslHmac(SECRETS.apiSecret, '');

  it('sends <authScheme>-HMAC-SHA256 with the word given, and SVC by default', async () => {
    const { url, seen } = await startApiService(replyWith(200, ''));
    await api(url, 'ABCD').resend({ orderId: 'o-1' });
    await api(url).resend({ orderId: 'o-1' });
    expect(seen.map((s) => s.headers['x-api-auth'])).toEqual([
      `ABCD-HMAC-SHA256 ${SECRETS.apiKey}:${signature()}`,
      `SVC-HMAC-SHA256 ${SECRETS.apiKey}:${signature()}`,
    ]);
  });

  it('sends a word already ending in -HMAC-SHA256 as is, not doubled', async () => {
    const { url, seen } = await startApiService(replyWith(200, ''));
    await api(url, 'AB-12-HMAC-SHA256').resend({ orderId: 'o-1' });
    await api(url, 'abcd-hmac-sha256').resend({ orderId: 'o-1' });
    expect(seen.map((s) => s.headers['x-api-auth'])).toEqual([
      `AB-12-HMAC-SHA256 ${SECRETS.apiKey}:${signature()}`,
      `abcd-hmac-sha256 ${SECRETS.apiKey}:${signature()}`,
    ]);
  });

  it.each([[''], ['AB CD'], ['ABCD:'], ['ABCD\n'], ['ÄBCD']])(
    'refuses an authScheme that is not letters, digits and - (%j)',
    (authScheme) => {
      expect(() => api('https://pay.test', authScheme)).toThrow(
        `[@payhook/payments] authScheme must be a word of letters, digits and '-' (the service's, e.g. in its X-API-AUTH examples), not ${JSON.stringify(authScheme)}.`,
      );
    },
  );

  it('names the authScheme sent and the signer in the error of a 401', async () => {
    const { url } = await startApiService(replyWith(401, { message: 'no', args: { code: 'S-404' } }));
    const error = await api(url, 'ABCD')
      .resend({ orderId: 'o-1' })
      .then(
        () => expect.unreachable(),
        (e: ApiError) => e,
      );
    expect([error.code, error.message]).toEqual([
      'api.unauthorized',
      `[@payhook/payments] GET /api/v1/pos/${POS}/orders/o-1/purchase?callback=true answered 401 (S-404: no): the likely causes are authScheme (sent "ABCD") and the request signature (signRequest, or apiSecret for the default HMAC-SHA256 of the body); then check apiKey, endpointsKey and posId.`,
    ]);
  });
});

describe('createApiClient().resend path segments', () => {
  it('keeps every order id inside its own segment: / ? # % encoded and signed as sent, . and .. refused', async () => {
    const { url, seen } = await startApiService(replyWith(200, ''));
    const signed: string[] = [];
    const client = createApiClient({
      baseUrl: `${url}/base`,
      posId: POS,
      apiKey: SECRETS.apiKey,
      endpointsKey: SECRETS.endpointsKey,
      signRequest: ({ path }) => {
        signed.push(path);
        return 'sig';
      },
    });
    for (const orderId of ['..', '.']) {
      await expect(client.resend({ orderId })).rejects.toThrow(
        `[@payhook/payments] orderId ${JSON.stringify(orderId)} cannot be sent as a path segment: URL normalisation removes it, and the request would reach another path.`,
      );
    }
    expect(() => createApiClient({ baseUrl: url, ...SECRETS, posId: '..' })).toThrow(
      '[@payhook/payments] posId ".." cannot be sent as a path segment',
    );
    expect(seen).toEqual([]);
    const ids = ['a/b', '?x=1', '#top', '100%', '%2e%2e', '.hidden', 'a..b', '...'];
    for (const orderId of ids) await client.resend({ orderId, transactionId: 'a&b=c' });
    const paths = ids.map(
      (id) =>
        `/base/api/v1/pos/${POS}/orders/${encodeURIComponent(id)}/purchase?callback=true&transactionId=a%26b%3Dc`,
    );
    expect(seen.map((s) => s.url)).toEqual(paths);
    expect(signed).toEqual(paths);
  });
});
