import type { SignatureHint } from '../errors.js';
import { decodeBase64UrlText, encodeBase64Url } from '../runtime/bytes.js';

/** Which alteration of `data` a candidate undoes: the hints of `diagnoseSignature` about `data`. */
type DataAlteration = Extract<SignatureHint, `data_${string}`>;

/**
 * What `data` may have been before something between the service and payhook altered it, cheapest first: each
 * candidate paired with the alteration it undoes. Lazy, so the diagnosis stops at the first that verifies, and
 * built only where `data` shows a sign of the alteration (a spelling the service does not send, a space in the
 * JSON): a forged delivery of the service's spelling gets the JSON candidates only.
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

/**
 * `data` in the other base64 alphabet, with its padding toggled, and both: what a decoder and encoder change. None
 * for `data` in the service's own spelling (base64url, padded): a relay that re-encoded it wrote what was sent.
 */
function respellings(data: string): string[] {
  const url = /[-_]/.test(data);
  const standard = /[+/]/.test(data);
  const unpadded = data.replace(/=+$/, '');
  if (!standard && data.length % 4 === 0) return [];
  const swapped = url && !standard ? toStandard(data) : standard && !url ? toUrl(data) : undefined;
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
 * The JSON with its spaces turned back into `+`: every space (a notification without one of its own), then only a
 * space between a digit or quote and a digit (`+02:00` in a timestamp, `+380…` in a phone number).
 */
function* plusRestored(json: string): Generator<string> {
  if (!json.includes(' ')) return;
  const all = json.replace(/ /g, '+');
  yield all;
  const numeric = json.replace(/(?<=[\d"]) (?=\d)/g, '+');
  if (numeric !== all && numeric !== json) yield numeric;
}

/**
 * The JSON as other serialisers write it, for data a JSON parser re-serialised, both ways: signed as PHP's
 * `json_encode` (`\/`, `\u00e9`) and its flags or Python's `json.dumps` (`", "` and `": "`, `\u00e9`) write it and
 * re-serialised compact by JSON.stringify (`/` and non-ASCII as they are, no spaces), or signed compact and
 * re-serialised by PHP or Python (then JSON.stringify's own form is what was signed).
 */
function* reserialised(json: string): Generator<string> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const plain = JSON.stringify(value);
  const compact = escapeSlashes(plain);
  // Each candidate costs a hash per secret: only the serialisers' defaults, PHP's JSON_UNESCAPED_UNICODE (common
  // for Cyrillic text), and the compact form itself.
  const seen = new Set([json]);
  const candidates = [
    () => escapeUnicode(compact),
    () => compact,
    () => escapeUnicode(spaced(plain)),
    () => plain,
  ];
  for (const text of candidates) {
    const candidate = text();
    if (seen.has(candidate)) continue;
    seen.add(candidate);
    yield candidate;
  }
}

const escapeSlashes = (json: string): string => json.replace(/\//g, '\\/');
const escapeUnicode = (json: string): string =>
  json.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * JSON.stringify's output with Python's default separators (`, ` and `: `): its strings skipped whole (they hold
 * `,` and `:` of their own), a space after every separator between them.
 */
const spaced = (json: string): string =>
  json.replace(/"(?:[^"\\]|\\.)*"|[,:]/g, (token) => (token.length === 1 ? `${token} ` : token));
