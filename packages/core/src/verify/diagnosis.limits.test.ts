import { afterEach, describe, expect, it, vi } from 'vitest';
import { FORM_HEADERS, purchase, SECRET } from '../../test/fixtures.js';
import { SignatureError, type WebhookError } from '../errors.js';
import { createWebhookHandler } from '../handler.js';
import { encodeBase64Url } from '../runtime/bytes.js';
import { dataCandidates } from './alterations.js';
import {
  createHintLog,
  createWindowLimit,
  DIAGNOSES_PER_MINUTE,
  DIAGNOSIS_MAX_HASHES,
  diagnoseSignature,
  HINT_WARNINGS_PER_MINUTE,
} from './diagnosis.js';
import { sign } from './signature.js';
import { explainDelivery, verifyNotification } from './verify.js';

const data = encodeBase64Url(JSON.stringify(purchase()));
const sha1Signed = { data, signature: sign(data, SECRET, { algorithm: 'sha1' }) };
const body = ({ data, signature }: { data: string; signature: string }) =>
  `data=${encodeURIComponent(data)}&signature=${encodeURIComponent(signature)}`;

afterEach(() => {
  vi.useRealTimers();
});

describe('createWindowLimit', () => {
  it('lets the first `limit` events of each window through, and opens a new one when the clock goes back', () => {
    let now = 1_000;
    const fits = createWindowLimit(2, 60_000, () => now);
    expect([fits(), fits(), fits()]).toEqual([true, true, false]);
    now += 59_999;
    expect(fits()).toBe(false);
    now += 1;
    expect([fits(), fits(), fits()]).toEqual([true, true, false]);
    now -= 5_000;
    expect(fits()).toBe(true);
  });
});

describe("a refusal's diagnosis is bounded", () => {
  it(`hashes at most ${DIAGNOSIS_MAX_HASHES} times a refusal: past them the candidates are not tried`, () => {
    const { signature } = { signature: sign(data, SECRET) };
    const newline = { data: `${data}\n`, signature };
    const secrets = (n: number) => [...Array.from({ length: n - 1 }, (_, i) => `old-secret-${i}`), SECRET];
    const mayHash = () => true;
    expect(diagnoseSignature(newline, secrets(DIAGNOSIS_MAX_HASHES), 'sha256', { mayHash })).toBe(
      'data_whitespace',
    );
    expect(
      diagnoseSignature(newline, secrets(DIAGNOSIS_MAX_HASHES + 1), 'sha256', { mayHash }),
    ).toBeUndefined();
  });

  it('tries no other base64 spelling for data in the service spelling (base64url, padded): a forgery costs fewer hashes', () => {
    const alterations = (text: string) => [...dataCandidates(text)].map(([alteration]) => alteration);
    expect(alterations(data)).not.toContain('data_reencoded');
    expect(alterations(data.slice(0, -1))).toContain('data_reencoded');
    expect(alterations(`${data.slice(0, 4)}+/${data.slice(6)}`)).toContain('data_reencoded');
  });

  it(`diagnoses ${DIAGNOSES_PER_MINUTE} refusals a minute by hashing per process; then the length hints only, but explainDelivery in full`, async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 86_400_000);
    const hints = Array.from({ length: DIAGNOSES_PER_MINUTE }, () =>
      diagnoseSignature(sha1Signed, [SECRET], 'sha256'),
    );
    expect(new Set(hints)).toEqual(new Set(['sha1']));
    expect(diagnoseSignature(sha1Signed, [SECRET], 'sha256')).toBe('sha1_length');
    expect(() => verifyNotification(body(sha1Signed), SECRET)).toThrow(
      expect.objectContaining({ hint: 'sha1_length' }),
    );
    expect((await explainDelivery(body(sha1Signed), SECRET)).error).toMatchObject({ hint: 'sha1' });
    vi.setSystemTime(Date.now() + 60_000);
    expect(diagnoseSignature(sha1Signed, [SECRET], 'sha256')).toBe('sha1');
  });
});

describe('the diagnosis budget is one per process, however many copies of payhook it loaded', () => {
  it(`a second copy of the module (the ESM and the CJS build) shares the ${DIAGNOSES_PER_MINUTE} a minute`, async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 2 * 86_400_000);
    for (let i = 0; i < DIAGNOSES_PER_MINUTE; i++) diagnoseSignature(sha1Signed, [SECRET], 'sha256');
    expect(diagnoseSignature(sha1Signed, [SECRET], 'sha256')).toBe('sha1_length');
    vi.resetModules();
    const copy = await import('./diagnosis.js');
    expect(copy.diagnoseSignature).not.toBe(diagnoseSignature);
    expect(copy.diagnoseSignature(sha1Signed, [SECRET], 'sha256')).toBe('sha1_length');
    vi.setSystemTime(Date.now() + 60_000);
    expect(copy.diagnoseSignature(sha1Signed, [SECRET], 'sha256')).toBe('sha1');
  });
});

describe('hint warnings', () => {
  const error = new SignatureError('signature.invalid', 'refused.', { hint: 'sha1_length' });

  it(`logs ${HINT_WARNINGS_PER_MINUTE} a minute, then one line saying they are paused, then how many were not logged`, () => {
    let now = 0;
    const log = createHintLog(() => now);
    const lines = Array.from({ length: HINT_WARNINGS_PER_MINUTE + 3 }, () => log(error));
    expect(
      lines.slice(0, HINT_WARNINGS_PER_MINUTE).every((line) => line?.endsWith('(hint: sha1_length)')),
    ).toBe(true);
    expect(lines[HINT_WARNINGS_PER_MINUTE]).toContain(
      `more than ${HINT_WARNINGS_PER_MINUTE} deliveries were refused with a hint within a minute`,
    );
    expect(lines.slice(HINT_WARNINGS_PER_MINUTE + 1)).toEqual([undefined, undefined]);
    expect(log(new SignatureError('signature.invalid', 'refused.'))).toBeUndefined();
    now = 60_000;
    expect(log(error)).toMatch(
      /\(hint: sha1_length\) \(3 more refused with a hint were not logged while paused\)$/,
    );
    expect(log(error)).toMatch(/\(hint: sha1_length\)$/);
  });

  it('a flood of forged SHA-1-sized signatures: every one answered the same 401 and seen by onError, a bounded log', async () => {
    const warnings: string[] = [];
    const errors: WebhookError[] = [];
    const handler = createWebhookHandler({
      secret: SECRET,
      store: false,
      handle: () => undefined,
      onError: (refusal) => void errors.push(refusal),
      logger: { warn: (line: string) => void warnings.push(line), error: () => undefined },
    });
    const forged = body({ data, signature: sign(data, 'not-the-secret', { algorithm: 'sha1' }) });
    const answers = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const result = await handler({ method: 'POST', headers: FORM_HEADERS, body: forged }, undefined);
      answers.add(JSON.stringify([result.status, result.body]));
    }
    expect(answers.size).toBe(1);
    expect(errors.map((refusal) => (refusal as SignatureError).hint)).toEqual(Array(50).fill('sha1_length'));
    expect(warnings).toHaveLength(HINT_WARNINGS_PER_MINUTE + 1);
    expect(warnings.at(-1)).toContain('paused');
  });
});
