import { PayloadError } from '../errors.js';
import { decodeBase64UrlText } from '../runtime/base64url.js';
import { type JsonProblem, parseJsonObject } from './json-object.js';

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
  return parseJsonObject(text, dataRefused);
}

function dataRefused(problem: JsonProblem): PayloadError {
  return problem === 'not_json'
    ? new PayloadError('data.json_invalid', 'data decodes to text that is not JSON.')
    : new PayloadError('data.not_object', 'data decodes to JSON that is not an object.');
}
