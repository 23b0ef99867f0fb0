import {
  type DeliveryExplanation,
  decodeData,
  explainDelivery,
  parseNotification,
  SIGNATURE_HINTS,
  type SignatureAlgorithm,
  type SignatureError,
  WebhookError,
} from '@payhook/core';
import { refusal } from '@payhook/core/adapter';
import { algorithmFrom, readInput, secretsFrom, UsageError } from './args.js';
import { defineCommand } from './command.js';
import { type CliIO, jsonText, printable } from './io.js';
import { maskNotification } from './mask.js';

const VERIFY_HELP = `Usage: payhook verify [--secret S ...] [--algorithm sha1] [--file body.txt] [--explain]

Checks a captured delivery as the webhook handler does (the same code): reads the form body
(data=…&signature=…) or a JSON envelope ({"data":…,"signature":…}) from standard input byte for byte, says
whether the signature verifies and with which secret, and prints the decoded notification with card tokens
masked. A body the handler refuses is refused here too, with what most likely happened (the hint the handler
logs). Exits 0 when it verifies and parses, 1 when not.

Options:
  --secret S        a secret to try; repeat while rotating (the index printed is its position).
                    Or set PAYHOOK_SECRET, which keeps it out of 'ps'.
  --algorithm A     sha256 (default) or sha1
  --file PATH|-     read the body from a file instead of standard input
  --explain         also print what the handler answers, and say so when nothing explains a refusal
  -h, --help        this help

Example:
  pbpaste | PAYHOOK_SECRET=s3cret payhook verify --explain`;

/** What the handler's diagnosis says of a refused signature (the same words as its log line). */
const NO_HINT =
  'none: nothing payhook can guess explains it (a forgery, a tampered delivery, or a secret not given here).';

function describeSignature(
  explained: DeliveryExplanation,
  algorithm: SignatureAlgorithm,
  count: number,
): string {
  const { secret, error } = explained;
  if (secret)
    return `signature: valid (${algorithm}, secret #${secret.index}${count > 1 ? ` of ${count}` : ''})`;
  return `signature: INVALID (${algorithm}: ${error?.code ?? 'refused'})`;
}

/** The hint of a refusal, as `hint: <code>: <what to do>`; with `explain`, a line also when there is none. */
function hintLine(error: WebhookError | undefined, explain: boolean): string | undefined {
  const hint = (error as SignatureError | undefined)?.hint;
  if (hint !== undefined) return `hint: ${hint}: ${SIGNATURE_HINTS[hint]}`;
  return explain && error?.status === 401 ? `hint: ${NO_HINT}` : undefined;
}

/**
 * `payhook verify`: checks a captured delivery with core's `explainDelivery`, the handler's own reading and
 * verification, and prints it with card tokens masked.
 *
 * @example
 * const code = await verifyCommand(['--secret', 's3cret', '--explain'], processIO());
 */
export const verifyCommand = defineCommand({
  help: VERIFY_HELP,
  options: { text: 'algorithm file', list: 'secret', flag: 'explain' },
  run: async ({ values }, io) => {
    const secrets = secretsFrom(values.secret, io);
    const algorithm = algorithmFrom(values.algorithm);
    const explained = await explainDelivery(await readInput(values.file, io, 'a captured body'), secrets, {
      algorithm,
    });
    const { envelope, error } = explained;
    if (envelope === undefined) {
      throw new UsageError(
        `the input has no data and signature fields the handler can read (${error?.status} ${error?.code}): expected data=…&signature=… or JSON.`,
      );
    }
    io.stdout(describeSignature(explained, algorithm, secrets.length));
    const hint = hintLine(error, values.explain === true);
    if (hint !== undefined) io.stdout(hint);
    if (values.explain && error) io.stdout(`answer: ${error.status} ${refusal(error).body}`);
    return printNotification(envelope.data, explained, io);
  },
});

/** The notification inside `data`, masked, verified or not; 0 when the handler would take the delivery. */
function printNotification(data: string, explained: DeliveryExplanation, io: CliIO): number {
  let raw: Record<string, unknown>;
  try {
    raw = decodeData(data);
  } catch (error) {
    io.stdout(`data: cannot be decoded (${error instanceof WebhookError ? error.code : 'error'})`);
    return 1;
  }
  const verified = explained.secret !== undefined;
  try {
    const n = parseNotification(raw);
    io.stdout(
      `notification: ${printable(`${n.method} ${n.status}${n.status_code ? ` ${n.status_code}` : ''}`)} (${n.kind}${verified ? '' : ', UNVERIFIED'})`,
    );
  } catch (error) {
    const fields = error instanceof WebhookError && 'fields' in error ? (error.fields as string[]) : [];
    io.stdout(`notification: invalid (notification.invalid: ${printable(fields.join(', '))})`);
  }
  io.stdout(jsonText(maskNotification(raw), 2));
  return explained.error === undefined ? 0 : 1;
}
