import { describe, expect, it, vi } from 'vitest';
import { encodeBase64Url } from '../runtime/bytes.js';
import { checkSecretOption, resolveSecrets, secretSource } from './secrets.js';
import { sign, verifySignature } from './signature.js';

const data = encodeBase64Url(JSON.stringify({ payment_id: 'p-1', pos_id: 'pos-1', status: 'success' }));

const PASS =
  "pass the project's secret (SECRET_KEY in the service's settings) as a string, an { id, secret } object, an array of them, or a function of pos_id.";
const UNSET =
  ' If it is read from an environment variable (secret: process.env.WEBHOOK_SECRET!), that variable is not set, or is empty, where this process runs.';

describe('checkSecretOption', () => {
  it.each([
    [
      'undefined (an unset environment variable)',
      undefined,
      `the secret option is undefined: ${PASS}${UNSET}`,
    ],
    ['null', null, `the secret option is null: ${PASS}${UNSET}`],
    ['an empty string', '', `the secret option is an empty string: ${PASS}${UNSET}`],
    ['a number', 42, `the secret option is a number: ${PASS}`],
    ['a boolean', true, `the secret option is a boolean: ${PASS}`],
    [
      'an object without secret',
      { id: 'v2' },
      `the secret option is an object without a secret property: ${PASS}`,
    ],
    [
      'an object whose secret is unset',
      { id: 'v2', secret: undefined },
      `the secret property of the secret option is undefined: ${PASS}${UNSET}`,
    ],
    [
      'an object whose secret is a number',
      { secret: 7 },
      `the secret property of the secret option is a number: ${PASS}`,
    ],
    ['an empty array', [], `the secret option is an empty array: ${PASS}`],
    [
      'an array holding undefined',
      ['current', undefined],
      `item 1 of the secret option is undefined: ${PASS}${UNSET}`,
    ],
    [
      'an array holding an object whose secret is empty',
      [{ id: 'new', secret: '' }],
      `the secret property of item 0 of the secret option is an empty string: ${PASS}${UNSET}`,
    ],
    ['an array holding an array', [['a']], `item 0 of the secret option is an array: ${PASS}`],
  ])('refuses %s with a TypeError naming the option and the likely cause', (_, value, message) => {
    expect(() => checkSecretOption(value)).toThrow(new TypeError(`[@payhook/core] ${message}`));
  });

  it('returns a resolver as given, and static secrets as a list', () => {
    const resolver = () => 'secret';
    const named = { id: 'v1', secret: 's1' };
    expect(checkSecretOption(resolver)).toBe(resolver);
    expect(checkSecretOption('s')).toEqual(['s']);
    expect(checkSecretOption(named)).toEqual([named]);
    expect(checkSecretOption(['s', named])).toEqual(['s', named]);
  });

  it('checks what verifySignature is given and what a resolver answers', async () => {
    expect(() => verifySignature(data, sign(data, 'x'), undefined as unknown as string)).toThrow(
      `[@payhook/core] the secret option is undefined: ${PASS}${UNSET}`,
    );
    await expect(resolveSecrets(() => [{ id: 'v1' }] as never, data)).rejects.toThrow(
      `[@payhook/core] item 0 of what the secret resolver returned is an object without a secret property: ${PASS}`,
    );
    await expect(resolveSecrets(() => [], data)).resolves.toEqual([]);
  });
});

describe('secretSource', () => {
  const PADDED = /^\[@payhook\/core\] a webhook secret has leading or trailing whitespace/;

  it('checks static secrets once and warns once, without the secret, about surrounding whitespace', () => {
    const warn = vi.fn();
    expect(secretSource([' current', { id: 'old', secret: 'old\n' }], warn)).toEqual([
      ' current',
      { id: 'old', secret: 'old\n' },
    ]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(PADDED);
    expect(warn.mock.calls[0]![0]).not.toContain('current');
    expect(() => secretSource([])).toThrow('[@payhook/core] the secret option is an empty array');
  });

  it('asks a resolver with the pos_id of the data, checks its answer, and warns once over many deliveries', async () => {
    const warn = vi.fn();
    const asked: (string | undefined)[] = [];
    const source = secretSource((posId: string | undefined) => {
      asked.push(posId);
      return posId === 'pos-1' ? ['padded '] : [{ id: 'v1' } as never];
    }, warn);
    if (typeof source !== 'function') throw new Error('a resolver gives a lookup');
    expect(await source(data)).toEqual(['padded ']);
    expect(await source(data)).toEqual(['padded ']);
    expect(warn).toHaveBeenCalledTimes(1);
    await expect(source(encodeBase64Url('{"pos_id":"other"}'))).rejects.toThrow(
      `[@payhook/core] item 0 of what the secret resolver returned is an object without a secret property: ${PASS}`,
    );
    expect(asked).toEqual(['pos-1', 'pos-1', 'other']);
  });

  it('stays silent about trimmed secrets and when no warn is given', () => {
    const warn = vi.fn();
    secretSource(['current', { id: 'old', secret: 'old' }], warn);
    expect(warn).not.toHaveBeenCalled();
    expect(secretSource(' padded')).toEqual([' padded']);
  });
});
