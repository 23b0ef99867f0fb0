// The one place tests and scripts build a delivery body. It imports core's sources, not a package entry, so core's
// own tests can use it (no dependency on @payhook/testing) and it does not change with core's public surface.
import { encodeBase64Url } from '../../packages/core/src/runtime/bytes.ts';
import { type SignatureOptions, sign } from '../../packages/core/src/verify/signature.ts';

/** The service's media type for deliveries. */
export const FORM = 'application/x-www-form-urlencoded';

/**
 * `data` and, when given, `signature` as the form body the service posts (spec 5), whatever their values: for a
 * forged signature or a missing field. Use `signedForm` or `signedData` for a delivery that should verify.
 *
 * @example
 * encodeForm({ data: tamperedData, signature: envelope(original, secret).signature });
 */
export function encodeForm(fields: { data: string; signature?: string }): string {
  const form = new URLSearchParams({ data: fields.data });
  if (fields.signature !== undefined) form.set('signature', fields.signature);
  return form.toString();
}

/**
 * The `data` and `signature` fields of a delivery of `notification`: its JSON as base64url, signed with the spec's
 * formula.
 *
 * @example
 * const { data, signature } = envelope(purchase(), 'secret');
 */
export function envelope(
  notification: unknown,
  secret: string,
  options?: SignatureOptions,
): { data: string; signature: string } {
  const data = encodeBase64Url(JSON.stringify(notification));
  return { data, signature: sign(data, secret, options) };
}

/**
 * A delivery body carrying `data` exactly as given (already base64url, or deliberately not), signed with `secret`.
 *
 * @example
 * signedData('%%%not-base64', secret); // signed, but refused with data.encoding_invalid
 */
export function signedData(data: string, secret: string, options?: SignatureOptions): string {
  return encodeForm({ data, signature: sign(data, secret, options) });
}

/**
 * A delivery body exactly as the service posts it for `notification`: form-encoded `data` and `signature`.
 *
 * @example
 * await fetch(url, { method: 'POST', headers: { 'content-type': FORM }, body: signedForm(purchase(), secret) });
 */
export function signedForm(notification: unknown, secret: string, options?: SignatureOptions): string {
  return encodeForm(envelope(notification, secret, options));
}
