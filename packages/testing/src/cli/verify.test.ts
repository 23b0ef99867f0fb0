import { describe, expect, it } from 'vitest';
import { signedForm } from '../../../../test/support/signed-form.ts';
import { fakePurchase } from '../fixtures/primary.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const secret = 'verify-bidi-secret';

describe('payhook verify --explain', () => {
  it('shows bidi and C1 characters of a notification escaped, in its summary and its JSON', async () => {
    const sent = {
      ...fakePurchase({}, { seed: 'bidi' }),
      status: 'succ\u202eess',
      description: 'a\u0085b\u2066c',
    };
    const { io, out } = memoryIO(signedForm(sent, secret), { PAYHOOK_SECRET: secret });
    const code = await runCli(['verify', '--explain'], io);
    expect(code).toBe(0);
    const text = out.join('\n');
    expect(text).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(text).toContain('succ\\u{202e}ess');
  });
});
