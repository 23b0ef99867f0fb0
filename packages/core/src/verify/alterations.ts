import { decodeBase64UrlText, encodeBase64Url } from '../runtime/base64url.js';
import type { SignatureHint } from './diagnosis.js';

/** Which alteration of `data` a candidate undoes: the hints of `diagnoseSignature` about `data`. */
type DataAlteration = Extract<SignatureHint, `data_${string}`>;

/**
 * What `data` may have been before something between the service and payhook altered it, cheapest first: each
 * candidate paired with the alteration it undoes. Lazy, so the diagnosis stops at the first that verifies.
 */
export function* dataCandidates(data: string): Generator<readonly [DataAlteration, string]> {
  const trimmed = data.trim();
  if (trimmed !== data) yield ['data_whitespace', trimmed];
  if (data.includes('%')) {
    const decoded = percentDecoded(data);
    if (decoded !== undefined && decoded !== data) yield ['data_percent_encoded', decoded];
  }
  for (const spelling of respellings(trimmed)) yield ['data_reencoded', spelling];
  const json = decodeBase64UrlText(trimmed);
  if (json === undefined) return;
  const encode = encoderLike(trimmed);
  for (const text of plusRestored(json)) yield ['data_altered_plus_space', encode(text)];
  for (const text of reserialised(json)) yield ['data_reserialised', encode(text)];
}

function percentDecoded(data: string): string | undefined {
  try {
    return decodeURIComponent(data);
  } catch {
    return undefined;
  }
}

const toStandard = (text: string): string => text.replace(/-/g, '+').replace(/_/g, '/');
const toUrl = (text: string): string => text.replace(/\+/g, '-').replace(/\//g, '_');

/** `data` in the other base64 alphabet, with its padding toggled, and both: what a decoder and encoder change. */
function respellings(data: string): string[] {
  const url = /[-_]/.test(data);
  const standard = /[+/]/.test(data);
  const swapped = url && !standard ? toStandard(data) : standard && !url ? toUrl(data) : undefined;
  const unpadded = data.replace(/=+$/, '');
  const repad = (text: string): string =>
    unpadded === data ? text + '='.repeat((4 - (text.length % 4)) % 4) : text.replace(/=+$/, '');
  const spellings = [repad(data)];
  if (swapped !== undefined) spellings.push(swapped, repad(swapped));
  return spellings.filter((spelling) => spelling !== data);
}

/** Base64 of a text in the spelling `data` came in (its alphabet, padded or not), as a relay would re-encode it. */
function encoderLike(data: string): (text: string) => string {
  const standard = /[+/ ]/.test(data);
  const padded = data.endsWith('=') || data.length % 4 === 0;
  return (text) => {
    const encoded = encodeBase64Url(text, { pad: padded });
    return standard ? toStandard(encoded) : encoded;
  };
}

/**
 * The JSON with its spaces turned back into `+`: every space (a notification without one of its own), and only a
 * space between a digit or quote and a digit (`+02:00` in a timestamp, `+380…` in a phone number).
 */
function plusRestored(json: string): string[] {
  if (!json.includes(' ')) return [];
  const all = json.replace(/ /g, '+');
  const numeric = json.replace(/(?<=[\d"]) (?=\d)/g, '+');
  return numeric === all || numeric === json ? [all] : [all, numeric];
}

/**
 * The JSON as other serialisers write it, for data a JSON parser re-serialised (JSON.stringify writes `/` and
 * non-ASCII as they are, without spaces): PHP's `json_encode` (`\/`, `\u00e9`) and its flags, Python's
 * `json.dumps` (`", "` and `": "`, `\u00e9`).
 */
function reserialised(json: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return [];
  }
  if (value === null || typeof value !== 'object') return [];
  const compact = escapeSlashes(JSON.stringify(value));
  // Each candidate costs a hash per secret on every forged delivery: only the serialisers' defaults, and PHP's
  // JSON_UNESCAPED_UNICODE (common for Cyrillic text).
  const texts = [escapeUnicode(compact), compact, escapeUnicode(spacedJson(value))];
  return [...new Set(texts)].filter((text) => text !== json);
}

const escapeSlashes = (json: string): string => json.replace(/\//g, '\\/');
const escapeUnicode = (json: string): string =>
  json.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** JSON with Python's default separators. */
function spacedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spacedJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${spacedJson(item)}`);
    return `{${members.join(', ')}}`;
  }
  return JSON.stringify(value);
}
