import { type SignatureAlgorithm, sign } from '@payhook/core';
import { encodeBase64Url } from '@payhook/core/adapter';

/**
 * How to deliver a signed notification: as the service does, or in a way a receiver must survive or refuse.
 * - `exact`: base64url with padding, SHA-256, urlencoded form (what the service sends).
 * - `unpadded`: `data` and `signature` without `=` padding (still valid).
 * - `standardBase64`: `+` and `/` instead of `-` and `_` (still valid).
 * - `extraFields`: unknown fields inside the notification and in the form (still valid; receivers ignore them).
 * - `json`: the envelope as a JSON object with `Content-Type: application/json` (still valid).
 * - `sha1`: signed with SHA-1 (28 characters); valid only for a receiver configured with `algorithm: 'sha1'`.
 * - `tampered`: the amount was changed after signing (must be refused: `signature.invalid`).
 * - `wrongSecret`: signed with another secret (must be refused: `signature.invalid`).

 *
 * @example
 * const variant: SignVariant = 'standardBase64';
 */
export type SignVariant =
  | 'exact'
  | 'unpadded'
  | 'standardBase64'
  | 'extraFields'
  | 'json'
  | 'sha1'
  | 'tampered'
  | 'wrongSecret';

/**
 * Every variant, for `describe.each` and the CLI's `--variant`.
 *
 * @example
 * describe.each(SIGN_VARIANTS)('%s', (variant) => { … });
 */
export const SIGN_VARIANTS: readonly SignVariant[] = [
  'exact',
  'unpadded',
  'standardBase64',
  'extraFields',
  'json',
  'sha1',
  'tampered',
  'wrongSecret',
];

/**
 * How `signWebhook` signs and shapes the delivery.
 *
 * @example
 * signWebhook(fakePurchase(), secret, { variant: 'unpadded', algorithm: 'sha256' });
 */
export interface SignWebhookOptions {
  /** @default 'exact' */
  variant?: SignVariant;
  /**
   * The digest (the `sha1` variant forces `'sha1'`).
   * @default 'sha256'
   */
  algorithm?: SignatureAlgorithm;
}

/**
 * A delivery ready to POST: the two envelope fields, the body, and the headers to send it with.
 *
 * @example
 * const { body, headers } = signWebhook(fakeRefund(), secret);
 * await fetch(url, { method: 'POST', headers, body });
 */
export interface SignedWebhook {
  /** The `data` field exactly as sent. */
  readonly data: string;
  /** The `signature` field exactly as sent. */
  readonly signature: string;
  /** The request body: an urlencoded form, or JSON for the `json` variant. */
  readonly body: string;
  /** `content-type` for the body. */
  readonly headers: Readonly<Record<string, string>>;
  readonly variant: SignVariant;
}

const FORM = 'application/x-www-form-urlencoded';
/**
 * The unknown field the `extraFields` variant adds to the notification and to the form.
 *
 * @example
 * expect(delivery.raw).toHaveProperty(EXTRA_FIELD);
 */
export const EXTRA_FIELD = 'payhook_extra_field';

/** The wire object behind a notification: a parsed one's `raw`, or the plain object a builder made. */
function wireOf(notification: object): object {
  const raw = (notification as { raw?: unknown }).raw;
  if ('kind' in notification && raw !== null && typeof raw === 'object') return raw;
  return notification;
}

function toStandardBase64(text: string): string {
  return text.replace(/-/g, '+').replace(/_/g, '/');
}

function form(fields: readonly (readonly [string, string])[]): string {
  return new URLSearchParams(fields as [string, string][]).toString();
}

/**
 * Signs a notification as the service does (spec part 5: `base64url(sha256(secret + data + secret))`, padding
 * kept) and builds the body to POST, or one of the variants a receiver must survive or refuse.
 *
 * @example
 * const signed = signWebhook(fakePurchase(), 'test-secret');
 * await fetch(url, { method: 'POST', headers: signed.headers, body: signed.body });
 * signWebhook(fakePurchase(), 'test-secret', { variant: 'tampered' }); // must be answered 401
 */
export function signWebhook(
  notification: object,
  secret: string,
  options?: SignWebhookOptions,
): SignedWebhook {
  const variant = options?.variant ?? 'exact';
  if (!SIGN_VARIANTS.includes(variant)) {
    throw new TypeError(
      `[@payhook/testing] unknown variant ${JSON.stringify(variant)}: use one of ${SIGN_VARIANTS.join(', ')}.`,
    );
  }
  const algorithm = variant === 'sha1' ? 'sha1' : (options?.algorithm ?? 'sha256');
  let wire: Record<string, unknown> = { ...wireOf(notification) };
  if (variant === 'extraFields')
    wire = { ...wire, [EXTRA_FIELD]: { note: 'receivers ignore unknown fields' } };
  let data = encodeBase64Url(JSON.stringify(wire), { pad: variant !== 'unpadded' });
  if (variant === 'standardBase64') data = toStandardBase64(data);
  const key = variant === 'wrongSecret' ? `${secret}-not-the-project-secret` : secret;
  let signature = sign(data, key, { algorithm });
  if (variant === 'unpadded') signature = signature.replace(/=+$/, '');
  if (variant === 'standardBase64') signature = toStandardBase64(signature);
  if (variant === 'tampered') {
    const amount = typeof wire.amount === 'number' ? wire.amount : Number(wire.amount);
    data = encodeBase64Url(
      JSON.stringify({ ...wire, amount: (Number.isFinite(amount) ? amount : 0) + 1000 }),
    );
  }
  if (variant === 'json') {
    return {
      data,
      signature,
      body: JSON.stringify({ data, signature }),
      headers: { 'content-type': 'application/json' },
      variant,
    };
  }
  const fields: [string, string][] =
    variant === 'extraFields'
      ? [
          [EXTRA_FIELD, '1'],
          ['data', data],
          ['signature', signature],
          ['callback', 'true'],
        ]
      : [
          ['data', data],
          ['signature', signature],
        ];
  return { data, signature, body: form(fields), headers: { 'content-type': FORM }, variant };
}
