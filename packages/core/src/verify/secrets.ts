import { SignatureError } from '../errors.js';
import { hasAtMostJsonValues } from '../http/envelope.js';
import { decodeDataText, parseDataJson } from '../notification/parse.js';

/** A secret, optionally named so a match can be reported by name (rotation). */
export type Secret = string | { readonly id: string; readonly secret: string };

/** One secret, or several accepted at once while rotating (the first is the current one). */
export type SecretList = Secret | readonly Secret[];

/**
 * Picks the secrets of a project by its `pos_id` (test and live projects have separate secrets). The `pos_id`
 * comes from data whose signature is not yet checked: use it only to choose, never to trust.
 */
export type SecretResolver = (
  posId: string | undefined,
) => SecretList | undefined | Promise<SecretList | undefined>;

/** What `verifySignature` and the handler accept as `secret`. */
export type Secrets = SecretList | SecretResolver;

/**
 * Where a delivery's secrets come from once `secretSource` checked the option: a checked list, or a lookup
 * that reads `pos_id` from the delivery's data, asks the resolver and checks its answer.
 */
export type SecretSource = readonly Secret[] | SecretLookup;

interface SecretLookup {
  (data: string): Promise<readonly Secret[]>;
  /** The secrets it gave lately for other `pos_id`s: tried only to diagnose a refusal (`secret_for_other_project`). */
  readonly recent?: () => readonly Secret[];
}

function describeValue(value: unknown): string {
  if (value === undefined || value === null) return String(value);
  if (value === '') return 'an empty string';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (typeof value === 'object') return 'an object without a secret property';
  return `a ${typeof value}`;
}

function secretError(where: string, value: unknown): TypeError {
  const unset = value === undefined || value === null || value === '';
  return new TypeError(
    `[@payhook/core] ${where} is ${describeValue(value)}: pass the project's secret (SECRET_KEY in the service's settings) as a string, an { id, secret } object, an array of them, or a function of pos_id.${
      unset
        ? ' If it is read from an environment variable (secret: process.env.WEBHOOK_SECRET!), that variable is not set, or is empty, where this process runs.'
        : ''
    }`,
  );
}

/** `value` as a `Secret`, or a TypeError naming `where()` (built only then: this runs on every resolved delivery). */
function checkSecret(value: unknown, where: () => string): Secret {
  if (typeof value === 'string' && value !== '') return value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && 'secret' in value) {
    const { secret } = value;
    if (typeof secret === 'string' && secret !== '') return value as Secret;
    throw secretError(`the secret property of ${where()}`, secret);
  }
  throw secretError(where(), value);
}

/**
 * Checks the `secret` option: returns a resolver as given, or the static secrets as a non-empty list of
 * non-empty strings and `{ id, secret }` objects. Anything else (`undefined` from an unset environment variable
 * read as `process.env.WEBHOOK_SECRET!`, `null`, `''`, a number, an object without `secret`, an empty array, an
 * array holding any of these) throws a `TypeError` that names the option, the item and the likely cause, instead
 * of a TypeError from deep inside the first delivery.
 */
export function checkSecretOption(value: unknown): SecretResolver | readonly Secret[] {
  if (typeof value === 'function') return value as SecretResolver;
  if (!Array.isArray(value)) return [checkSecret(value, () => 'the secret option')];
  if (value.length === 0) throw secretError('the secret option', value);
  for (let i = 0; i < value.length; i++) checkSecret(value[i], () => `item ${i} of the secret option`);
  return value as readonly Secret[];
}

function toSecretArray(secrets: SecretList): readonly Secret[] {
  return typeof secrets === 'string' || !Array.isArray(secrets) ? [secrets as Secret] : secrets;
}

export function secretValue(secret: Secret): string {
  return typeof secret === 'string' ? secret : secret.secret;
}

/**
 * The most JSON values unverified data may hold for its `pos_id` to be read: a notification has about fifty, and
 * JSON.parse of a megabyte of tiny values costs forty times that of a megabyte of text.
 */
const MAX_UNVERIFIED_VALUES = 10_000;

/** `pos_id` from unverified data, to choose secrets only; `undefined` when it cannot be read cheaply. */
function unverifiedPosId(data: string): string | undefined {
  try {
    const json = decodeDataText(data);
    if (!hasAtMostJsonValues(json, MAX_UNVERIFIED_VALUES)) return undefined;
    const value = parseDataJson(json).pos_id;
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads `pos_id` from unverified data (to choose secrets only), asks the resolver and checks its answer. A
 * resolver that throws or rejects (its database is down) is `secret.unavailable`: nothing was verified, and the
 * service's retry may find the secrets.
 */
export async function resolveSecrets(
  resolver: SecretResolver,
  data: string,
  remember?: (posId: string, secrets: readonly Secret[]) => void,
): Promise<readonly Secret[]> {
  const posId = unverifiedPosId(data);
  let found: SecretList | undefined;
  try {
    found = await resolver(posId);
  } catch (cause) {
    const message = 'the secret resolver failed, so the signature could not be checked.';
    throw new SignatureError('secret.unavailable', message, { cause });
  }
  if (found === undefined) return [];
  const secrets = toSecretArray(found).map((secret, index) =>
    checkSecret(secret, () => `item ${index} of what the secret resolver returned`),
  );
  if (remember && posId !== undefined && secrets.length > 0) remember(posId, secrets);
  return secrets;
}

const RECENT_PROJECTS = 8;

function recentSecrets(): {
  remember: (posId: string, secrets: readonly Secret[]) => void;
  recent: () => readonly Secret[];
} {
  const byPosId = new Map<string, readonly Secret[]>();
  return {
    remember: (posId, secrets) => {
      byPosId.delete(posId);
      byPosId.set(posId, secrets);
      if (byPosId.size > RECENT_PROJECTS) byPosId.delete(byPosId.keys().next().value as string);
    },
    recent: () => [...byPosId.values()].flat(),
  };
}

const PADDED =
  '[@payhook/core] a webhook secret has leading or trailing whitespace; it is used as given. Trim it if it was copied with a newline.';

/**
 * The `secret` option checked once (`checkSecretOption`), as the source every delivery takes its secrets from:
 * static secrets as they are, a resolver's answers checked per delivery. `warn`, when given, hears once about a
 * secret with surrounding whitespace (used as given: the service may have been set up with it).
 */
export function secretSource(value: unknown, warn?: (message: string) => void): SecretSource {
  let warned = warn === undefined;
  const checkPadding = (list: readonly Secret[]): void => {
    if (warned || !list.some((secret) => secretValue(secret) !== secretValue(secret).trim())) return;
    warned = true;
    warn?.(PADDED);
  };
  const checked = checkSecretOption(value);
  if (typeof checked !== 'function') {
    checkPadding(checked);
    return checked;
  }
  const { remember, recent } = recentSecrets();
  const lookup = async (data: string): Promise<readonly Secret[]> => {
    const list = await resolveSecrets(checked, data, remember);
    checkPadding(list);
    return list;
  };
  return Object.assign(lookup, { recent });
}
