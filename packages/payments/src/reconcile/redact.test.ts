import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startApiService } from '../../test/api-service.js';
import { createApiClient } from './api-client.js';
import type { ApiError } from './api-errors.js';
import { createReconciler } from './reconciler.js';
import { createRedactor } from './redact.js';
import { hmacRequestSigner } from './request-signer.js';

const POS = '5f0c8a4e-1b2c-4d3e-8f4a-5b6c7d8e9f0a';
const CREDENTIALS = {
  apiKey: 'AK_live_7Qx2',
  endpointsKey: 'EK_live_9Zr4',
  apiSecret: 'secret-never-shown-3e1f',
};
const SIGNATURE = await hmacRequestSigner(CREDENTIALS.apiSecret)({
  method: 'GET',
  path: '',
  body: '',
  apiKey: '',
});

/** Everything that must never appear in a message: each credential, the signature and the header sent. */
const NEVER = [
  CREDENTIALS.apiKey,
  CREDENTIALS.endpointsKey,
  CREDENTIALS.apiSecret,
  SIGNATURE,
  SIGNATURE.slice(0, 16),
  'SVC-HMAC-SHA256',
];

/** A service that echoes every credential it received, in the places real error bodies put them. */
function echoing(status: number) {
  return (request: IncomingMessage, response: ServerResponse) => {
    const auth = String(request.headers['x-api-auth']);
    const key = String(request.headers['x-api-key']);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        message: `Invalid credentials: X-API-AUTH=${auth} X-API-KEY=${key}; expected signature ${SIGNATURE.toUpperCase()} for secret ${CREDENTIALS.apiSecret} (${encodeURIComponent(key)})`,
        args: { code: auth.split(':')[1] },
      }),
    );
  };
}

function expectNothingSecret(text: string | undefined): void {
  for (const secret of NEVER) expect(text?.toLowerCase()).not.toContain(secret.toLowerCase());
}

describe('credentials echoed by the service', () => {
  it.each([
    [401, 'api.unauthorized'],
    [400, 'api.refused'],
    [500, 'api.server'],
  ] as const)(
    'never reach the ApiError of a %i: message, serviceMessage, serviceCode',
    async (status, code) => {
      const { url } = await startApiService(echoing(status));
      const client = createApiClient({ baseUrl: url, posId: POS, ...CREDENTIALS });
      const error = await client.resend({ orderId: 'o-1' }).then(
        () => expect.unreachable(),
        (e: ApiError) => e,
      );
      expect([error.code, error.serviceCode]).toEqual([code, '[redacted]']);
      expect(error.serviceMessage).toBe(
        'Invalid credentials: [redacted] [redacted]; expected signature [redacted] for secret [redacted] ([redacted])',
      );
      for (const text of [error.message, error.serviceMessage, error.serviceCode, String(error.stack)]) {
        expectNothingSecret(text);
      }
    },
  );

  it("never reach the reconciler's report", async () => {
    const { url } = await startApiService(echoing(401));
    const report = await createReconciler({
      api: { baseUrl: url, posId: POS, ...CREDENTIALS },
      listPending: () => [{ orderId: 'o-1' }],
    }).run();
    const result = report.results[0]!;
    expect([result.status, (result.error as ApiError).code]).toEqual(['failed', 'api.unauthorized']);
    expectNothingSecret(result.reason);
    expectNothingSecret(JSON.stringify(report));
  });
});

describe('createRedactor', () => {
  const redact = createRedactor(['key-1', 'key-1-and-more', undefined, '']);

  it('replaces each credential in any case and percent-encoded, the longest first', () => {
    expect(redact('KEY-1 key-1-and-more key-1%2Fx key%2D1')).toBe(
      '[redacted] [redacted] [redacted]%2Fx key%2D1',
    );
    expect(redact('k/1 and a/b', ['k/1'])).toBe('[redacted] and a/b');
    expect(redact('k%2F1', ['k/1'])).toBe('[redacted]');
  });

  it.each([
    ['X-API-AUTH: CPAY ak_other:sk_other, then', '[redacted], then'],
    ['"x-api-auth":"XYZW-HMAC-SHA256 a:b"', '"[redacted]"'],
    ["x-api-key='ek_other'", "[redacted]'"],
    ['header ABCD-HMAC-SHA256 ak_other:0f0f', 'header [redacted]'],
    [`signature ${'ab12'.repeat(10)}.`, 'signature [redacted].'],
  ])('replaces what is shaped like a credential whatever its value: %j', (text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  it('leaves ordinary service text alone', () => {
    const text = 'Invalid pos_id field or credentials: order 12:30 not found (S-404), X-API-AUTH missing';
    expect(redact(text)).toBe(text);
  });
});
