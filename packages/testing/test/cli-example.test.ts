import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningExample, startExample } from '../../../examples/shared/src/child.ts';
import { fakePurchase } from '../src/index.js';
import { assertBuilt, runCli } from './run-cli.js';

const secret = 'example-secret';

describe('payhook send against examples/express', () => {
  let example: RunningExample;

  beforeAll(async () => {
    assertBuilt();
    example = await startExample('express', secret);
  });
  afterAll(async () => {
    await example?.stop();
  });

  it('--repeat 3 reaches the application once: 1 handled, 2 duplicates', async () => {
    const result = await runCli(
      ['send', 'purchase.success', '--url', `${example.url}/webhooks`, '--repeat', '3', '--seed', 'example'],
      { env: { PAYHOOK_SECRET: secret } },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').at(-1)).toBe('sent 3: 1 handled, 2 duplicate');
    const [line] = await example.waitForLines(1);
    const purchase = fakePurchase({}, { seed: 'example' });
    expect(line).toMatchObject({
      payment_id: purchase.payment_id,
      order_id: purchase.order_id,
      method: 'purchase',
      status: 'success',
      status_code: '1000',
      amount: 250.5,
      currency: 'UAH',
    });
    expect(example.lines).toHaveLength(1);
  });
});
