import type { SignatureHint, WebhookError } from '../errors.js';
import type { Envelope } from '../http/request.js';
import { dataCandidates } from './alterations.js';
import { type Secret, secretValue } from './secrets.js';
import { matchSecret, normalizeSignature, type SignatureAlgorithm } from './signature.js';

/**
 * The largest `data` a refusal is diagnosed by hashing (a notification is a few kilobytes); past it only the
 * signature's length is read, so a refused delivery at `maxBodyBytes` costs what it did without diagnosis.
 */
export const DIAGNOSIS_MAX_DATA = 16 * 1024;

/**
 * What each hint says, with what to do: the text of the handler's warning and of `payhook verify`.
 *
 * @example
 * onError: (error) => { if (error instanceof SignatureError && error.hint) alert(SIGNATURE_HINTS[error.hint]); }
 */
export const SIGNATURE_HINTS: Readonly<Record<SignatureHint, string>> = {
  sha1: "it verifies under SHA-1 with a configured secret: the project signs with SHA-1, so set the algorithm option to 'sha1' (payhook verify --algorithm sha1).",
  sha1_length:
    "the signature has SHA-1's length (28 characters), not SHA-256's (44): the project likely signs with SHA-1, so set the algorithm option to 'sha1', and check the secret.",
  sha256:
    "it verifies under SHA-256 with a configured secret: remove algorithm: 'sha1' (SHA-256 is the default).",
  sha256_length:
    "the signature has SHA-256's length (44 characters), not SHA-1's (28): remove algorithm: 'sha1', and check the secret.",
  signature_whitespace:
    'the signature ends or starts with whitespace (a trailing newline: a body saved to a file by an editor or echo, then sent with curl --data-binary @file): send the body without it.',
  data_whitespace:
    'data verifies without its surrounding whitespace (a trailing newline): the body was altered before payhook read it; send it exactly as signed.',
  data_percent_encoded:
    'data verifies once its percent-escapes (%3D) are decoded: it reached payhook still escaped (decoded once too few, or escaped twice on the way); pass the decoded form value.',
  data_reencoded:
    'data verifies in another base64 spelling (alphabet or padding): something decoded and re-encoded it; pass data exactly as received.',
  data_altered_plus_space:
    "data verifies with the spaces of its JSON turned back into '+': its JSON went through a form or percent decoder (a '+' became a space) and was re-encoded; pass data exactly as received.",
  data_reserialised:
    'data verifies with its JSON serialised another way (escaped slashes, \\u escapes, spaced separators): a JSON parser re-serialised it; pass data exactly as received.',
  secret_whitespace:
    'it verifies with a configured secret trimmed of its surrounding whitespace: remove the whitespace (a newline copied with it) from the secret.',
  secret_for_other_project:
    "it verifies with a secret the resolver gave for another pos_id: the secret it returns for this delivery's pos_id is another project's (test and live projects have separate secrets).",
};

/** The most hashes one refusal's diagnosis computes (a candidate under each secret is one): past them it stops. */
export const DIAGNOSIS_MAX_HASHES = 12;
/**
 * The refusals a process diagnoses by hashing in a minute: anyone who can POST can send a forged delivery, so past
 * them, until the minute is over, a refusal gets the hints that need no hashing only (as one past
 * `DIAGNOSIS_MAX_DATA`).
 */
export const DIAGNOSES_PER_MINUTE = 60;
/** The hint warnings one handler logs in a minute (`createHintLog`). */
export const HINT_WARNINGS_PER_MINUTE = 10;
const MINUTE = 60_000;

/**
 * Whether one more event fits: the first `limit` of each window of `ms`, a window opened by the first event past the
 * last (or before it: a clock set back).
 */
export function createWindowLimit(
  limit: number,
  ms: number,
  now: () => number,
  window: { start: number; used: number } = { start: Number.NEGATIVE_INFINITY, used: 0 },
): () => boolean {
  return () => {
    const time = now();
    if (time - window.start >= ms || time < window.start) {
      window.start = time;
      window.used = 0;
    }
    if (window.used >= limit) return false;
    window.used++;
    return true;
  };
}

/**
 * The process's window, kept on `globalThis` under a registered symbol: a process that loads payhook twice (its
 * ESM and CJS builds, or two versions) still diagnoses `DIAGNOSES_PER_MINUTE` a minute, not that many per copy.
 */
function processWindow(): { start: number; used: number } {
  const key = Symbol.for('@payhook/core.diagnoses-per-minute');
  const shared = globalThis as unknown as Record<symbol, { start: number; used: number } | undefined>;
  const window = shared[key];
  if (typeof window?.start === 'number' && typeof window.used === 'number') return window;
  const fresh = { start: Number.NEGATIVE_INFINITY, used: 0 };
  shared[key] = fresh;
  return fresh;
}

const processDiagnoses = createWindowLimit(DIAGNOSES_PER_MINUTE, MINUTE, () => Date.now(), processWindow());

export interface DiagnosisOptions {
  /** The secrets of other projects (a resolver's recent answers). */
  readonly others?: readonly Secret[];
  /**
   * Asked once, before the first hash: whether this refusal may be diagnosed by hashing. Default: the process's
   * `DIAGNOSES_PER_MINUTE`; `payhook verify --explain`, which a person runs, always may.
   */
  readonly mayHash?: () => boolean;
}

/**
 * What most likely made the signature of a refused delivery fail, or `undefined` when nothing payhook can guess
 * explains it (a forgery, a tampered delivery, an unknown secret). `secrets` are those it was checked against.
 * Hashes only `data` up to `DIAGNOSIS_MAX_DATA`, at most `DIAGNOSIS_MAX_HASHES` times, and only while `mayHash`
 * allows; never throws.
 */
export function diagnoseSignature(
  envelope: Envelope,
  secrets: readonly Secret[],
  algorithm: SignatureAlgorithm,
  { others = [], mayHash = processDiagnoses }: DiagnosisOptions = {},
): SignatureHint | undefined {
  try {
    const signature = envelope.signature.trim();
    if (signature !== envelope.signature && normalizeSignature(signature, algorithm) !== undefined) {
      return 'signature_whitespace';
    }
    const hashing = envelope.data.length <= DIAGNOSIS_MAX_DATA;
    const other: SignatureAlgorithm = algorithm === 'sha256' ? 'sha1' : 'sha256';
    const underOther = normalizeSignature(signature, other);
    if (underOther !== undefined) {
      const matches = hashing && mayHash() && matchSecret(envelope.data, underOther, secrets, other) >= 0;
      return matches ? other : `${other}_length`;
    }
    const expected = normalizeSignature(signature, algorithm);
    if (expected === undefined || !hashing || !mayHash()) return undefined;
    const matches = hashBudget(expected, algorithm);
    return secretHint(envelope.data, secrets, others, matches) ?? dataHint(envelope.data, secrets, matches);
  } catch {
    // A diagnosis is a courtesy: nothing it meets may change the refusal.
    return undefined;
  }
}

/** Whether a candidate `data` verifies under one of `secrets`. */
type Matches = (data: string, secrets: readonly Secret[]) => boolean;

/** `matchSecret` against `expected` within `DIAGNOSIS_MAX_HASHES`: the try that would pass them, and every later, fails. */
function hashBudget(expected: string, algorithm: SignatureAlgorithm): Matches {
  let left = DIAGNOSIS_MAX_HASHES;
  return (data, secrets) => {
    if (secrets.length === 0) return false;
    // matchSecret hashes data with spaces twice: as received, and with them turned back into `+`.
    const hashes = secrets.length * (data.includes(' ') ? 2 : 1);
    if (hashes > left) left = 0;
    if (left === 0) return false;
    left -= hashes;
    return matchSecret(data, expected, secrets, algorithm) >= 0;
  };
}

function secretHint(
  data: string,
  secrets: readonly Secret[],
  others: readonly Secret[],
  matches: Matches,
): SignatureHint | undefined {
  const trimmed = secrets
    .map(secretValue)
    .filter((value) => value !== value.trim() && value.trim() !== '')
    .map((value) => value.trim());
  if (matches(data, trimmed)) return 'secret_whitespace';
  if (others.length === 0) return undefined;
  const known = new Set(secrets.map(secretValue));
  const foreign = others.filter((secret) => !known.has(secretValue(secret)));
  return matches(data, foreign) ? 'secret_for_other_project' : undefined;
}

function dataHint(data: string, secrets: readonly Secret[], matches: Matches): SignatureHint | undefined {
  for (const [alteration, candidate] of dataCandidates(data)) {
    if (matches(candidate, secrets)) return alteration;
  }
  return undefined;
}

/**
 * The warning logged for a refusal that carries a hint: its status, code, what most likely happened and what to
 * do. Never the secret, the signature or the data. `undefined` for any other error.
 */
function hintWarning(error: WebhookError): string | undefined {
  const hint = (error as { hint?: SignatureHint }).hint;
  if (hint === undefined) return undefined;
  return `[@payhook/core] a delivery was refused with ${error.status} ${error.code}: ${SIGNATURE_HINTS[hint]} (hint: ${hint})`;
}

/**
 * `hintWarning` for one handler's logger, at most `HINT_WARNINGS_PER_MINUTE` a minute: anyone who can POST can make
 * a refusal carry a hint (a signature of SHA-1's length), so past them one line says the warnings are paused for the
 * rest of the minute, and the next one logged says how many were not. `onError` and the span still get every hint.
 */
export function createHintLog(
  now: () => number = () => Date.now(),
): (error: WebhookError) => string | undefined {
  const fits = createWindowLimit(HINT_WARNINGS_PER_MINUTE, MINUTE, now);
  let unlogged = 0;
  return (error) => {
    const warning = hintWarning(error);
    if (warning === undefined) return undefined;
    if (!fits()) {
      unlogged++;
      return unlogged === 1
        ? `[@payhook/core] more than ${HINT_WARNINGS_PER_MINUTE} deliveries were refused with a hint within a minute: their warnings are paused for the rest of it (anyone who can POST can cause them; onError and the payhook:delivery channel still get every hint).`
        : undefined;
    }
    if (unlogged === 0) return warning;
    const line = `${warning} (${unlogged} more refused with a hint were not logged while paused)`;
    unlogged = 0;
    return line;
  };
}
