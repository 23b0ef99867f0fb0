import { describe, expect, it } from 'vitest';
import { FORM_HEADERS, formBody, purchase, refund, SECRET } from '../../test/fixtures.js';
import {
  ERROR_STATUS,
  PayloadError,
  RequestError,
  SignatureError,
  type WebhookErrorCode,
} from '../errors.js';
import { createWebhookHandler } from '../handler.js';
import { encodeBase64Url } from '../runtime/bytes.js';
import { sign } from './signature.js';
import { type NotificationInput, verifyEnvelope, verifyNotification } from './verify.js';

const OLD_SECRET = 'old-secret-19c2';

function signed(text: string, secret = SECRET): { data: string; signature: string } {
  const data = encodeBase64Url(text);
  return { data, signature: sign(data, secret) };
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

/** What the handler answers for the same body, so both are held to one set of rules. */
async function handlerCode(body: string | Uint8Array, secret = SECRET): Promise<string | undefined> {
  const handler = createWebhookHandler({ secret, logger: false, store: false, handle: () => undefined });
  const result = await handler({ method: 'POST', headers: FORM_HEADERS, body }, undefined);
  return result.error?.code ?? result.outcome;
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected verifyNotification to throw');
}

describe('verifyNotification', () => {
  it('returns the typed notification of a raw form body, as text or bytes', () => {
    const body = formBody(purchase());
    for (const input of [body, Buffer.from(body), new Uint8Array(Buffer.from(body))]) {
      const notification = verifyNotification(input, SECRET);
      expect(notification).toMatchObject({ kind: 'primary', method: 'purchase', order_id: 'order-1001' });
      expect(notification.amount).toBe(150.25);
    }
  });

  it('takes the two fields when a body parser already split them', () => {
    const fields = Object.fromEntries(new URLSearchParams(formBody(refund())));
    const notification = verifyNotification(fields as { data: string; signature: string }, SECRET);
    expect(notification).toMatchObject({
      kind: 'secondary',
      operation_id: '5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9',
    });
  });

  it('takes a JSON envelope as text, bytes or parsed, as the handler reads it by its Content-Type', async () => {
    const text = `\n ${JSON.stringify(signed(JSON.stringify(purchase())))}`;
    const handler = createWebhookHandler({
      secret: SECRET,
      logger: false,
      store: false,
      handle: () => undefined,
    });
    const headers = { 'content-type': 'application/json' };
    expect((await handler({ method: 'POST', headers, body: text }, undefined)).outcome).toBe('handled');
    expect(verifyNotification(JSON.parse(text), SECRET).order_id).toBe('order-1001');
    expect(verifyNotification(text, SECRET).order_id).toBe('order-1001');
    expect(verifyNotification(Buffer.from(text), SECRET).order_id).toBe('order-1001');
    expect(() => verifyNotification(`${text.slice(0, -1)}`, SECRET)).toThrow(
      expect.objectContaining({ code: 'payload.malformed' }),
    );
  });

  it('accepts a delivery signed with any secret of a rotating list, named or not', () => {
    const body = formBody(purchase(), OLD_SECRET);
    expect(verifyNotification(body, [SECRET, OLD_SECRET]).order_id).toBe('order-1001');
    expect(verifyNotification(body, [SECRET, { id: 'old', secret: OLD_SECRET }]).order_id).toBe('order-1001');
    expect((thrown(() => verifyNotification(body, [SECRET])) as SignatureError).code).toBe(
      'signature.invalid',
    );
  });

  it('tolerates an unescaped + in standard base64 data, read as a space, as the handler does', async () => {
    let extra = '';
    let data = '';
    // A notification whose standard base64 holds a `+`.
    while (!data.includes('+')) {
      extra += '>';
      data = Buffer.from(JSON.stringify(purchase({ note: extra }))).toString('base64');
    }
    const body = `data=${data}&signature=${encodeURIComponent(sign(data, SECRET))}`;
    expect(new URLSearchParams(body).get('data')).toContain(' ');
    expect(verifyNotification(body, SECRET)).toMatchObject({ order_id: 'order-1001', note: extra });
    expect(verifyNotification(Buffer.from(body), SECRET)).toMatchObject({ note: extra });
    expect(await handlerCode(body)).toBe('handled');
  });

  it('verifies sha1 signatures only when asked', () => {
    const data = encodeBase64Url(JSON.stringify(purchase()));
    const body = form({ data, signature: sign(data, SECRET, { algorithm: 'sha1' }) });
    expect(verifyNotification(body, SECRET, { algorithm: 'sha1' }).order_id).toBe('order-1001');
    expect((thrown(() => verifyNotification(body, SECRET)) as SignatureError).code).toBe('signature.invalid');
    expect(() => verifyNotification(body, SECRET, { algorithm: 'md5' as 'sha1' })).toThrow(
      /algorithm must be 'sha256' or 'sha1', not "md5"/,
    );
  });

  it('chooses secrets by pos_id with a resolver, and then answers with a promise', async () => {
    const asked: (string | undefined)[] = [];
    const resolve = async (posId: string | undefined) => {
      asked.push(posId);
      return posId === 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e' ? SECRET : undefined;
    };
    await expect(verifyNotification(formBody(purchase()), resolve)).resolves.toMatchObject({
      order_id: 'order-1001',
    });
    expect(asked).toEqual(['b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e']);
    const elsewhere = formBody(purchase({ pos_id: 'other' }));
    await expect(verifyNotification(elsewhere, resolve)).rejects.toMatchObject({ code: 'secret.not_found' });
    const down = () => Promise.reject(new Error('vault unreachable'));
    const unavailable = await verifyNotification(formBody(purchase()), down).catch((error: unknown) => error);
    expect(unavailable).toBeInstanceOf(SignatureError);
    expect(unavailable).toMatchObject({ code: 'secret.unavailable', status: 503 });
    await expect(verifyNotification('signature=x', resolve)).rejects.toMatchObject({
      code: 'payload.field_missing',
    });
  });

  it('refuses with the code, class and status the handler answers, for every refusal it can throw', async () => {
    const good = signed(JSON.stringify(purchase()));
    const cases: [
      WebhookErrorCode,
      typeof RequestError | typeof SignatureError | typeof PayloadError,
      string,
    ][] = [
      ['payload.field_missing', RequestError, form({ data: good.data })],
      ['payload.field_repeated', RequestError, `${form(good)}&data=${good.data}`],
      ['payload.malformed', RequestError, `data=%zz&signature=${good.signature}`],
      ['payload.too_large', RequestError, `${form(good)}${'&x'.repeat(1000)}`],
      ['signature.invalid', SignatureError, form({ ...good, signature: sign(good.data, 'wrong') })],
      ['data.encoding_invalid', PayloadError, form({ data: '!!!!', signature: sign('!!!!', SECRET) })],
      ['data.json_invalid', PayloadError, form(signed('not json'))],
      ['data.not_object', PayloadError, form(signed('[1]'))],
      ['notification.invalid', PayloadError, form(signed('{"payment_id":"p"}'))],
    ];
    for (const [code, type, body] of cases) {
      const error = thrown(() => verifyNotification(body, SECRET)) as RequestError;
      expect(error, code).toBeInstanceOf(type);
      expect({ code: error.code, status: error.status }).toEqual({ code, status: ERROR_STATUS[code] });
      expect(await handlerCode(body), code).toBe(code);
    }
    const invalid = thrown(() =>
      verifyNotification(form(signed('{"payment_id":"p"}')), SECRET),
    ) as PayloadError;
    expect(invalid.fields).toEqual([
      'order_id',
      'pos_id',
      'mode',
      'method',
      'amount',
      'currency',
      'status',
      'created_at',
    ]);
  });

  it('says which field of { data, signature } is wrong', () => {
    const good = signed(JSON.stringify(purchase()));
    const codeOf = (input: unknown) =>
      (thrown(() => verifyNotification(input as NotificationInput, SECRET)) as RequestError).code;
    expect(codeOf({ data: good.data })).toBe('payload.field_missing');
    expect(codeOf({ data: [good.data, good.data], signature: good.signature })).toBe(
      'payload.field_repeated',
    );
    expect(codeOf({ data: 1, signature: good.signature })).toBe('payload.malformed');
    expect(() => verifyNotification(undefined as unknown as string, SECRET)).toThrow(TypeError);
  });
});

describe('verifyEnvelope', () => {
  it('answers at once with static secrets: the notification and which secret matched', () => {
    const envelope = signed(JSON.stringify(purchase()), OLD_SECRET);
    const result = verifyEnvelope(envelope, [SECRET, { id: 'old', secret: OLD_SECRET }], 'sha256');
    expect(result.secret).toEqual({ valid: true, index: 1, id: 'old' });
    expect(result.notification).toMatchObject({ kind: 'primary', order_id: 'order-1001' });
  });

  it('checks the signature before it decodes: unreadable data wrongly signed is signature.invalid', () => {
    const envelope = { data: 'not base64url json!', signature: sign('other', SECRET) };
    expect((thrown(() => verifyEnvelope(envelope, [SECRET], 'sha256')) as SignatureError).code).toBe(
      'signature.invalid',
    );
  });

  it('answers with a promise when the secrets come from a lookup, rejecting every refusal', async () => {
    const envelope = signed(JSON.stringify(purchase()));
    const found = verifyEnvelope(envelope, async () => [SECRET], 'sha256');
    expect(found).toBeInstanceOf(Promise);
    await expect(found).resolves.toMatchObject({ secret: { index: 0, id: undefined } });
    await expect(verifyEnvelope(envelope, async () => [], 'sha256')).rejects.toMatchObject({
      code: 'secret.not_found',
    });
  });
});
