import type { WebhookError } from '../errors.js';
import type { Envelope } from '../http/body.js';
import { dataCandidates } from './alterations.js';
import { type Secret, secretValue } from './secrets.js';
import { matchSecret, normalizeSignature, type SignatureAlgorithm } from './signature.js';

/**
 * What most likely happened to a delivery refused for its signature (docs/errors.md lists each). Told to the
 * operator (the log, `onError`'s error, the span), never to the sender, and never a reason to accept it.
 */
export type SignatureHint =
  | 'sha1'
  | 'sha1_length'
  | 'sha256'
  | 'sha256_length'
  | 'signature_whitespace'
  | 'data_whitespace'
  | 'data_percent_encoded'
  | 'data_reencoded'
  | 'data_altered_plus_space'
  | 'data_reserialised'
  | 'secret_whitespace'
  | 'secret_for_other_project';

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

/**
 * What most likely made the signature of a refused delivery fail, or `undefined` when nothing payhook can guess
 * explains it (a forgery, a tampered delivery, an unknown secret). `secrets` are those it was checked against,
 * `others` the secrets of other projects (a resolver's recent answers). Hashes only `data` up to
 * `DIAGNOSIS_MAX_DATA`; never throws.
 */
export function diagnoseSignature(
  envelope: Envelope,
  secrets: readonly Secret[],
  algorithm: SignatureAlgorithm,
  others: readonly Secret[] = [],
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
      const matches = hashing && matchSecret(envelope.data, underOther, secrets, other) >= 0;
      return matches ? other : `${other}_length`;
    }
    const expected = normalizeSignature(signature, algorithm);
    if (expected === undefined || !hashing) return undefined;
    return (
      secretHint(envelope.data, expected, secrets, algorithm, others) ??
      dataHint(envelope.data, expected, secrets, algorithm)
    );
  } catch {
    // A diagnosis is a courtesy: nothing it meets may change the refusal.
    return undefined;
  }
}

function secretHint(
  data: string,
  expected: string,
  secrets: readonly Secret[],
  algorithm: SignatureAlgorithm,
  others: readonly Secret[],
): SignatureHint | undefined {
  const trimmed = secrets
    .map(secretValue)
    .filter((value) => value !== value.trim() && value.trim() !== '')
    .map((value) => value.trim());
  if (matchSecret(data, expected, trimmed, algorithm) >= 0) return 'secret_whitespace';
  const known = new Set(secrets.map(secretValue));
  const foreign = others.filter((secret) => !known.has(secretValue(secret)));
  if (matchSecret(data, expected, foreign, algorithm) >= 0) return 'secret_for_other_project';
  return undefined;
}

function dataHint(
  data: string,
  expected: string,
  secrets: readonly Secret[],
  algorithm: SignatureAlgorithm,
): SignatureHint | undefined {
  for (const [alteration, candidate] of dataCandidates(data)) {
    if (matchSecret(candidate, expected, secrets, algorithm) >= 0) return alteration;
  }
  return undefined;
}

/**
 * The warning logged for a refusal that carries a hint: its status, code, what most likely happened and what to
 * do. Never the secret, the signature or the data. `undefined` for any other error.
 */
export function hintWarning(error: WebhookError): string | undefined {
  const hint = (error as { hint?: SignatureHint }).hint;
  if (hint === undefined) return undefined;
  return `[@payhook/core] a delivery was refused with ${error.status} ${error.code}: ${SIGNATURE_HINTS[hint]} (hint: ${hint})`;
}
