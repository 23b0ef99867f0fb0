import diagnostics_channel from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { FORM_HEADERS, purchase, SECRET } from '../../test/fixtures.js';
import { type DeliveryMessage, PAYHOOK_CHANNELS } from '../diagnostics/messages.js';
import type { SignatureHint } from '../errors.js';
import { SignatureError, type WebhookError } from '../errors.js';
import { createWebhookHandler, type WebhookHandlerOptions } from '../handler.js';
import { encodeBase64Url } from '../runtime/bytes.js';
import { DIAGNOSIS_MAX_DATA, diagnoseSignature } from './diagnosis.js';
import { sign } from './signature.js';
import { explainDelivery, verifyNotification } from './verify.js';

const OTHER_SECRET = 'another-project-secret-41d0';

/** `data` and `signature` encoded as a form body, in that order unless `dataLast`. */
function body(data: string, signature: string, dataLast = false): string {
  const fields = [`data=${encodeURIComponent(data)}`, `signature=${encodeURIComponent(signature)}`];
  return (dataLast ? fields.reverse() : fields).join('&');
}

interface Refusal {
  status: number;
  code: string | undefined;
  hint: SignatureHint | undefined;
  warnings: string[];
}

/** One delivery to a fresh handler: its answer, the error `onError` saw, and what it logged. */
async function deliver(
  text: string,
  options: Partial<WebhookHandlerOptions> = {},
): Promise<Refusal & { errors: WebhookError[] }> {
  const warnings: string[] = [];
  const errors: WebhookError[] = [];
  const handler = createWebhookHandler({
    secret: SECRET,
    store: false,
    handle: () => undefined,
    onError: (error) => void errors.push(error),
    logger: { warn: (line: string) => void warnings.push(line), error: () => undefined },
    ...options,
  });
  const result = await handler({ method: 'POST', headers: FORM_HEADERS, body: text }, undefined);
  const hint = (errors[0] as SignatureError | undefined)?.hint;
  return { status: result.status, code: result.error?.code, hint, warnings, errors };
}

/** The signed text of a notification as given (already serialised), and its data and signature. */
function signedJson(json: string, secret = SECRET): { data: string; signature: string } {
  const data = encodeBase64Url(json);
  return { data, signature: sign(data, secret) };
}

describe('a delivery refused for its signature is diagnosed, never accepted', () => {
  it('answers a SHA-1 delivery to a SHA-256 handler 401 and names SHA-1 and the algorithm option in the log and onError', async () => {
    const data = encodeBase64Url(JSON.stringify(purchase()));
    const signature = sign(data, SECRET, { algorithm: 'sha1' });
    const refusal = await deliver(body(data, signature));
    expect(refusal).toMatchObject({ status: 401, code: 'signature.invalid', hint: 'sha1' });
    expect(refusal.errors[0]).toBeInstanceOf(SignatureError);
    expect(refusal.warnings).toEqual([
      "[@payhook/core] a delivery was refused with 401 signature.invalid: it verifies under SHA-1 with a configured secret: the project signs with SHA-1, so set the algorithm option to 'sha1' (payhook verify --algorithm sha1). (hint: sha1)",
    ]);
    for (const secretOrPayload of [SECRET, signature, signature.slice(0, 27), data.slice(0, 40)]) {
      expect(refusal.warnings[0]).not.toContain(secretOrPayload);
    }
    expect(refusal.errors[0]!.message).not.toContain('SHA-1');
  });

  it('hints sha1_length for a SHA-1-sized signature no configured secret signs', async () => {
    const data = encodeBase64Url(JSON.stringify(purchase()));
    const refusal = await deliver(body(data, sign(data, OTHER_SECRET, { algorithm: 'sha1' })));
    expect(refusal).toMatchObject({ status: 401, code: 'signature.invalid', hint: 'sha1_length' });
    expect(refusal.warnings[0]).toContain("SHA-1's length (28 characters)");
  });

  it('past 16 KiB of data, hashes nothing more: a SHA-1 delivery with the right secret gets the length hint only', async () => {
    const data = encodeBase64Url(JSON.stringify(purchase({ padding: 'x'.repeat(DIAGNOSIS_MAX_DATA) })));
    expect(data.length).toBeGreaterThan(DIAGNOSIS_MAX_DATA);
    const refusal = await deliver(body(data, sign(data, SECRET, { algorithm: 'sha1' })));
    expect(refusal).toMatchObject({ status: 401, hint: 'sha1_length' });
  });

  it('hints sha256 for a SHA-256 delivery to a handler set to SHA-1', async () => {
    const { data, signature } = signedJson(JSON.stringify(purchase()));
    const refusal = await deliver(body(data, signature), { algorithm: 'sha1' });
    expect(refusal).toMatchObject({ status: 401, code: 'signature.invalid', hint: 'sha256' });
    const forged = await deliver(body(data, sign(data, OTHER_SECRET)), { algorithm: 'sha1' });
    expect(forged.hint).toBe('sha256_length');
  });

  it('hints signature_whitespace for a body whose last field, the signature, ends in a newline', async () => {
    const { data, signature } = signedJson(JSON.stringify(purchase()));
    const refusal = await deliver(`${body(data, signature)}\n`);
    expect(refusal).toMatchObject({ status: 401, code: 'signature.invalid', hint: 'signature_whitespace' });
  });

  it('hints data_whitespace for a body whose last field, data, ends in a newline', async () => {
    const { data, signature } = signedJson(JSON.stringify(purchase()));
    const refusal = await deliver(`${body(data, signature, true)}\n`);
    expect(refusal).toMatchObject({ status: 401, code: 'signature.invalid', hint: 'data_whitespace' });
  });

  it('hints data_percent_encoded for data that reached payhook still percent-escaped (escaped twice)', async () => {
    let n = 0;
    let signed = signedJson(JSON.stringify(purchase()));
    while (!signed.data.endsWith('=')) signed = signedJson(JSON.stringify(purchase({ n: ++n })));
    const twice = `data=${signed.data.replace(/=/g, '%253D')}&signature=${encodeURIComponent(signed.signature)}`;
    const refusal = await deliver(twice);
    expect(refusal).toMatchObject({ status: 401, hint: 'data_percent_encoded' });
  });

  it('hints data_reencoded for data re-encoded without its padding or in standard base64', async () => {
    let n = 0;
    let signed = signedJson(JSON.stringify(purchase({ description: '>>>???' })));
    while (!signed.data.endsWith('='))
      signed = signedJson(JSON.stringify(purchase({ description: '>>>???', n: ++n })));
    expect(signed.data).toMatch(/[-_]/);
    const unpadded = await deliver(body(signed.data.replace(/=+$/, ''), signed.signature));
    expect(unpadded).toMatchObject({ status: 401, hint: 'data_reencoded' });
    const standard = signed.data.replace(/-/g, '+').replace(/_/g, '/');
    expect(await deliver(body(standard, signed.signature))).toMatchObject({
      status: 401,
      hint: 'data_reencoded',
    });
  });

  it("hints data_altered_plus_space for data whose JSON had its '+' turned into spaces and was re-encoded", async () => {
    const json = JSON.stringify(
      purchase({ processed_at: '2026-11-22T10:15:03+02:00', customer_phone: '+380501234567' }),
    );
    const { signature } = signedJson(json);
    const altered = encodeBase64Url(json.replace(/\+/g, ' '));
    const refusal = await deliver(body(altered, signature));
    expect(refusal).toMatchObject({
      status: 401,
      code: 'signature.invalid',
      hint: 'data_altered_plus_space',
    });
  });

  it('hints data_reserialised for PHP-style JSON (escaped slashes, \\u escapes) re-serialised by JSON.parse and JSON.stringify', async () => {
    const notification = purchase({
      receipt_url: 'https://pay.example.com/r/1',
      description: 'Замовлення 1001',
    });
    const php = JSON.stringify(notification)
      .replace(/\//g, '\\/')
      .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const { signature } = signedJson(php);
    const refusal = await deliver(body(encodeBase64Url(JSON.stringify(JSON.parse(php))), signature));
    expect(refusal).toMatchObject({ status: 401, code: 'signature.invalid', hint: 'data_reserialised' });
  });

  it("hints data_reserialised for Python's json.dumps spacing re-serialised compact", () => {
    const python =
      '{"payment_id": "8f3f5a0e", "amount": 150.25, "fee": {"amount": 3.01, "currency": "UAH"}, "tags": [1, 2]}';
    const { signature } = signedJson(python);
    const compact = encodeBase64Url(JSON.stringify(JSON.parse(python)));
    expect(diagnoseSignature({ data: compact, signature }, [SECRET], 'sha256')).toBe('data_reserialised');
  });

  it("hints data_reserialised the other way: signed compact, re-serialised by PHP's json_encode or Python's json.dumps", () => {
    const compact = JSON.stringify(
      purchase({ receipt_url: 'https://pay.example.com/r/1', description: 'Замовлення 1001' }),
    );
    const { signature } = signedJson(compact);
    const unicode = (json: string) =>
      json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    const php = unicode(compact.replace(/\//g, '\\/'));
    const python = unicode(compact.replace(/"(?:[^"\\]|\\.)*"|[,:]/g, (t) => (t.length === 1 ? `${t} ` : t)));
    for (const reserialised of [php, python]) {
      expect(reserialised).not.toBe(compact);
      const data = encodeBase64Url(reserialised);
      expect(diagnoseSignature({ data, signature }, [SECRET], 'sha256')).toBe('data_reserialised');
    }
  });

  it('hints secret_whitespace when the configured secret carries a newline the service does not', async () => {
    const { data, signature } = signedJson(JSON.stringify(purchase()));
    const refusal = await deliver(body(data, signature), { secret: `${SECRET}\n` });
    expect(refusal).toMatchObject({ status: 401, code: 'signature.invalid', hint: 'secret_whitespace' });
    expect(refusal.warnings.at(-1)).toContain('(hint: secret_whitespace)');
    expect(refusal.warnings.join('\n')).not.toContain(SECRET);
  });

  it("hints secret_for_other_project when a resolver's secret of another pos_id signs the delivery", async () => {
    const secrets: Record<string, string> = { 'pos-live': SECRET, 'pos-test': OTHER_SECRET };
    const errors: WebhookError[] = [];
    const handler = createWebhookHandler({
      secret: (posId) => (posId === undefined ? undefined : secrets[posId]),
      store: false,
      logger: false,
      handle: () => undefined,
      onError: (error) => void errors.push(error),
    });
    const send = (pos: string, secret: string) => {
      const { data, signature } = signedJson(JSON.stringify(purchase({ pos_id: pos })), secret);
      return handler({ method: 'POST', headers: FORM_HEADERS, body: body(data, signature) }, undefined);
    };
    expect((await send('pos-test', OTHER_SECRET)).status).toBe(200);
    const refused = await send('pos-live', OTHER_SECRET);
    expect(refused.status).toBe(401);
    expect((errors[0] as SignatureError).hint).toBe('secret_for_other_project');
  });

  it('gives no hint, and logs nothing, for a delivery signed with an unknown secret', async () => {
    const { data, signature } = signedJson(JSON.stringify(purchase()), OTHER_SECRET);
    const refusal = await deliver(body(data, signature));
    expect(refusal).toMatchObject({ status: 401, code: 'signature.invalid', hint: undefined, warnings: [] });
  });

  it('answers the sender the same bytes with and without a hint', async () => {
    const hints: (SignatureHint | undefined)[] = [];
    const answer = async (text: string, secret: string) => {
      const handler = createWebhookHandler({
        secret,
        store: false,
        logger: false,
        handle: () => undefined,
        onError: (error) => void hints.push((error as SignatureError).hint),
      });
      const request = new Request('http://localhost/webhooks', {
        method: 'POST',
        headers: FORM_HEADERS,
        body: text,
      });
      const response = await handler.fetch(request);
      const headers: [string, string][] = [];
      response.headers.forEach((value, name) => void headers.push([name, value]));
      return { status: response.status, headers, body: await response.text() };
    };
    const { data, signature } = signedJson(JSON.stringify(purchase()));
    const hinted = await answer(body(data, signature), `${SECRET} `);
    const plain = await answer(body(data, sign(data, OTHER_SECRET)), `${SECRET} `);
    expect(hinted).toEqual(plain);
    expect(hinted.status).toBe(401);
    const sha1 = await answer(body(data, sign(data, SECRET, { algorithm: 'sha1' })), SECRET);
    const garbage = await answer(body(data, '!'.repeat(28)), SECRET);
    expect(sha1).toEqual(garbage);
    expect(hints).toEqual(['secret_whitespace', undefined, 'sha1', undefined]);
  });

  it('puts the hint on the payhook:delivery message the span is built from', async () => {
    const messages: DeliveryMessage[] = [];
    const subscriber = { asyncEnd: (m: unknown) => void messages.push(m as DeliveryMessage) };
    const tracing = diagnostics_channel.tracingChannel(PAYHOOK_CHANNELS.delivery);
    tracing.subscribe(subscriber as never);
    try {
      const data = encodeBase64Url(JSON.stringify(purchase()));
      await deliver(body(data, sign(data, SECRET, { algorithm: 'sha1' })));
    } finally {
      tracing.unsubscribe(subscriber as never);
    }
    expect(messages.map((m) => [m.errorCode, m.hint])).toEqual([['signature.invalid', 'sha1']]);
  });

  it('throws the same hint from verifyNotification and returns it from explainDelivery', async () => {
    const data = encodeBase64Url(JSON.stringify(purchase()));
    const text = body(data, sign(data, SECRET, { algorithm: 'sha1' }));
    let thrown: unknown;
    try {
      verifyNotification(text, SECRET);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'signature.invalid', hint: 'sha1' });
    const explained = await explainDelivery(text, SECRET);
    expect(explained).toMatchObject({ secret: undefined, notification: undefined, error: { hint: 'sha1' } });
  });
});
