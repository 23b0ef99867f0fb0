import { decodeBase64UrlText } from './base64url.js';
import { PayloadError } from './errors.js';

/**
 * Decodes the `data` field (base64url JSON; standard base64 and missing padding tolerated) into the plain object
 * the service sent. `JSON.parse` defines `__proto__` and `constructor` as own data properties, so they stay
 * inert data; nothing here merges them into another object.
 *
 * @throws {PayloadError} `data.encoding_invalid`, `data.json_invalid` or `data.not_object`.
 * @example
 * const raw = decodeData(form.data); // { payment_id: '…', status: 'success', … }
 */
export function decodeData(data: string): Record<string, unknown> {
  return parseDataJson(decodeDataText(data));
}

/** The JSON text inside `data`. @throws {PayloadError} `data.encoding_invalid`. */
export function decodeDataText(data: string): string {
  const text = decodeBase64UrlText(data);
  if (text === undefined || text === '') {
    throw new PayloadError('data.encoding_invalid', 'data is not base64url (or base64) text.');
  }
  return text;
}

/** The object a notification's JSON text holds. @throws {PayloadError} `data.json_invalid` or `data.not_object`. */
export function parseDataJson(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // No cause: V8's message quotes the text (a piece of the payload), and causes end up in logs.
    throw new PayloadError('data.json_invalid', 'data decodes to text that is not JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new PayloadError('data.not_object', 'data decodes to JSON that is not an object.');
  }
  return value as Record<string, unknown>;
}
