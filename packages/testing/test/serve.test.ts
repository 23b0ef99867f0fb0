import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, serveCli } from './run-cli.js';

beforeAll(() => {
  assertBuilt();
});

describe('payhook serve (built CLI, child process)', () => {
  it('prints the credentials and the address, answers the API, and exits 0 on SIGTERM', async () => {
    const { url, credentials, stdout, stop } = await serveCli(['--endpoints-key', 'ek-given'], {
      PAYHOOK_SECRET: 'child-secret',
    });
    expect(credentials.endpointsKey).toBe('ek-given');
    expect(credentials.posId).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(credentials.apiKey).toMatch(/^ak_[0-9a-f]{24}$/);
    expect(stdout).not.toContain('child-secret');

    const refused = await fetch(`${url}/api/v1/payment`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': 'SVC-HMAC-SHA256 wrong:sig',
        'x-api-key': 'ek-given',
      },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    const invalid = await fetch(`${url}/api/v1/payment`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': `SVC ${credentials.apiKey}:child-secret`,
        'x-api-key': 'ek-given',
      },
      body: JSON.stringify({ pos_id: credentials.posId }),
    });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { args: { code: string } }).args.code).toBe('V-400');

    expect(await stop()).toBe(0);
  });
});
