import { describe, expect, it } from 'vitest';
import { memoryIO } from './io.js';
import { serveCommand } from './serve.js';

async function listening(out: string[]): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const line = out.find((l) => l.startsWith('listening on '));
    if (line) return line.slice('listening on '.length);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('payhook serve did not start');
}

describe('payhook serve arguments', () => {
  it('refuses an unknown flag with exit 2, suggesting the flag meant', async () => {
    const { io, err } = memoryIO();
    const code = await serveCommand(
      ['--port', '0', '--secret', 's', '--splitsum', 'ignore'],
      io,
      AbortSignal.abort(),
    );
    expect(code).toBe(2);
    expect(err[0]).toBe('payhook serve: unknown option --splitsum. Did you mean "--split-sum"?');
  });

  it('refuses a --split-sum or --refund-webhook-code outside its choices', async () => {
    const split = memoryIO();
    expect(
      await serveCommand(
        ['--port', '0', '--secret', 's', '--split-sum', 'some'],
        split.io,
        AbortSignal.abort(),
      ),
    ).toBe(2);
    expect(split.err[0]).toBe(
      'payhook serve: --split-sum must be one of equal, at_most, ignore, not "some".',
    );
    const refund = memoryIO();
    const code = await serveCommand(
      ['--port', '0', '--secret', 's', '--refund-webhook-code', '1001'],
      refund.io,
      AbortSignal.abort(),
    );
    expect([code, refund.err[0]]).toEqual([
      2,
      'payhook serve: --refund-webhook-code must be 1000 or 1004, not "1001".',
    ]);
  });

  /** Runs `payhook serve` with `flags` while `use` talks to it; the server must then stop with exit 0. */
  async function serving<T>(
    flags: string[],
    use: (url: string, posId: string, out: string[]) => Promise<T>,
    env: Record<string, string> = {},
  ): Promise<T> {
    const { io, out } = memoryIO('', env);
    const stop = new AbortController();
    const args = ['--port', '0', '--secret', 's', '--seed', '3', '--api-key', 'ak', '--endpoints-key', 'ek'];
    const done = serveCommand([...args, ...flags], io, stop.signal);
    try {
      const url = await listening(out);
      return await use(url, out.find((l) => l.startsWith('pos_id: '))!.slice('pos_id: '.length), out);
    } finally {
      stop.abort();
      expect(await done).toBe(0);
    }
  }

  function post(url: string, body: object, auth = 'SVC ak:s'): Promise<Response> {
    return fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        'x-api-auth': auth,
        'x-api-key': 'ek',
      },
      body: JSON.stringify(body),
    });
  }

  const hosted = {
    mode: 'hosted',
    method: 'purchase',
    amount: 100,
    currency: 'XTS',
    order_3ds_bypass: 'supported',
    customer_email: 'a@example.com',
    customer_phone: '+380501234567',
  };

  /** The status /split/purchase answers a split adding up to less than amount, on a server run with `flags`. */
  function splitShortOfAmount(flags: string[]): Promise<number> {
    return serving(flags, async (url, posId) => {
      const response = await post(`${url}/api/v1/split/purchase`, {
        ...hosted,
        pos_id: posId,
        description: 'Split',
        order_id: 'split-1',
        split: [{ amount: 60, sub_merchant_id: '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c' }],
      });
      return response.status;
    });
  }

  it('names the shop given by --merchant-name on the hosted checkout', async () => {
    const page = await serving(['--merchant-name', 'Teapots & Co'], async (url, posId) => {
      const created = await post(`${url}/api/v1/payment`, {
        ...hosted,
        pos_id: posId,
        description: 'Teapot',
        order_id: 'named-1',
      });
      expect(created.status).toBe(303);
      return (await fetch(created.headers.get('location')!)).text();
    });
    expect(page).toContain('Teapots &amp; Co');
  });

  it('accepts split amounts that do not add up by default, refuses them with --strict, and --split-sum overrides', async () => {
    expect(await splitShortOfAmount([])).toBe(303);
    expect(await splitShortOfAmount(['--strict'])).toBe(400);
    expect(await splitShortOfAmount(['--strict', '--split-sum', 'at_most'])).toBe(303);
  });

  /** The statuses of a hosted payment sent with each `X-API-AUTH` in turn, on a server run with `flags`. */
  function statusesWith(
    auths: string[],
    flags: string[],
    env: Record<string, string> = {},
  ): Promise<number[]> {
    return serving(
      flags,
      async (url, posId) => {
        const statuses: number[] = [];
        for (const [i, auth] of auths.entries()) {
          const body = { ...hosted, pos_id: posId, description: 'Auth', order_id: `auth-${i}` };
          statuses.push((await post(`${url}/api/v1/payment`, body, auth)).status);
        }
        return statuses;
      },
      env,
    );
  }

  it('refuses another scheme word than --auth-scheme with --strict, and takes any word without --strict', async () => {
    expect(await statusesWith(['ABCD ak:s', 'SVC ak:s'], ['--strict', '--auth-scheme', 'ABCD'])).toEqual([
      303, 401,
    ]);
    expect(await statusesWith(['ABCD ak:s', 'SVC ak:s'], ['--auth-scheme', 'ABCD'])).toEqual([303, 303]);
    const banner = await serving(['--auth-scheme', 'ABCD'], async (_url, _posId, out) =>
      out.find((l) => l.startsWith('X-API-AUTH: ')),
    );
    expect(banner).toBe('X-API-AUTH: ABCD-HMAC-SHA256 ak:<HMAC> or ABCD ak:<API secret>');
  });

  it('checks requests against PAYHOOK_API_SECRET when it is set, else against the webhook secret', async () => {
    expect(
      await statusesWith(['SVC ak:api-secret', 'SVC ak:s'], [], { PAYHOOK_API_SECRET: 'api-secret' }),
    ).toEqual([303, 401]);
  });

  it('refuses an --algorithm other than sha256 or sha1, and an --auth-scheme that is not a word', async () => {
    const algorithm = memoryIO();
    const args = ['--port', '0', '--secret', 's'];
    expect(await serveCommand([...args, '--algorithm', 'md5'], algorithm.io, AbortSignal.abort())).toBe(2);
    expect(algorithm.err[0]).toBe('payhook serve: --algorithm must be sha256 or sha1, not "md5".');
    const scheme = memoryIO();
    expect(await serveCommand([...args, '--auth-scheme', 'A B'], scheme.io, AbortSignal.abort())).toBe(2);
    expect(scheme.err[0]).toBe(
      'payhook serve: --auth-scheme must be a word of letters, digits and "-", such as SVC.',
    );
  });
});
