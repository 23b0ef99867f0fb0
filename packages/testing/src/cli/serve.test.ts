import { describe, expect, it } from 'vitest';
import { memoryIO } from './io.js';
import { runServe } from './serve.js';

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
    const code = await runServe(
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
      await runServe(['--port', '0', '--secret', 's', '--split-sum', 'some'], split.io, AbortSignal.abort()),
    ).toBe(2);
    expect(split.err[0]).toBe(
      'payhook serve: --split-sum must be one of equal, at_most, ignore, not "some".',
    );
    const refund = memoryIO();
    const code = await runServe(
      ['--port', '0', '--secret', 's', '--refund-webhook-code', '1001'],
      refund.io,
      AbortSignal.abort(),
    );
    expect([code, refund.err[0]]).toEqual([
      2,
      'payhook serve: --refund-webhook-code must be 1000 or 1004, not "1001".',
    ]);
  });

  /** The status /split/purchase answers a split adding up to less than amount, on a server run with `flags`. */
  async function splitShortOfAmount(flags: string[]): Promise<number> {
    const { io, out } = memoryIO();
    const stop = new AbortController();
    const args = ['--port', '0', '--secret', 's', '--seed', '3', '--api-key', 'ak', '--endpoints-key', 'ek'];
    const done = runServe([...args, ...flags], io, stop.signal);
    try {
      const url = await listening(out);
      const posId = out.find((l) => l.startsWith('pos_id: '))!.slice('pos_id: '.length);
      const response = await fetch(`${url}/api/v1/split/purchase`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'x-api-auth': 'SVC-HMAC-SHA256 ak:x',
          'x-api-key': 'ek',
        },
        body: JSON.stringify({
          pos_id: posId,
          mode: 'hosted',
          method: 'purchase',
          amount: 100,
          currency: 'XTS',
          description: 'Split',
          order_id: 'split-1',
          order_3ds_bypass: 'supported',
          customer_email: 'a@example.com',
          customer_phone: '+380501234567',
          split: [{ amount: 60, sub_merchant_id: '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c' }],
        }),
      });
      return response.status;
    } finally {
      stop.abort();
      expect(await done).toBe(0);
    }
  }

  it('accepts split amounts that do not add up by default, refuses them with --strict, and --split-sum overrides', async () => {
    expect(await splitShortOfAmount([])).toBe(303);
    expect(await splitShortOfAmount(['--strict'])).toBe(400);
    expect(await splitShortOfAmount(['--strict', '--split-sum', 'at_most'])).toBe(303);
  });
});
