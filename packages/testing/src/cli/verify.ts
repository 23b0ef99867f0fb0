import {
  decodeData,
  parseNotification,
  type SignatureAlgorithm,
  type VerifyResult,
  verifySignature,
  WebhookError,
} from '@payhook/core';
import {
  algorithmFrom,
  noArguments,
  parseCommand,
  readInput,
  runCommand,
  secretsFrom,
  UsageError,
} from './args.js';
import { type CliIO, jsonText, printable } from './io.js';
import { maskNotification } from './mask.js';

const VERIFY_HELP = `Usage: payhook verify [--secret S ...] [--algorithm sha1] [--file body.txt]

Checks a captured delivery: reads the form body (data=…&signature=…) or a JSON envelope
({"data":…,"signature":…}) from standard input, says whether the signature verifies and with which secret,
and prints the decoded notification with card tokens masked. Exits 0 when it verifies and parses, 1 when not.

Options:
  --secret S        a secret to try; repeat while rotating (the index printed is its position).
                    Or set PAYHOOK_SECRET, which keeps it out of 'ps'.
  --algorithm A     sha256 (default) or sha1
  --file PATH|-     read the body from a file instead of standard input
  -h, --help        this help

Example:
  pbpaste | PAYHOOK_SECRET=s3cret payhook verify`;

const REASONS: Record<string, string> = {
  malformed: 'the signature is not a digest of this algorithm in base64url',
  mismatch: 'no given secret signs this data',
  no_secret: 'no secret was given',
};

/** The envelope inside a captured body: a JSON object or an urlencoded form. */
function readEnvelope(text: string): { data: string; signature: string } {
  const body = text.trim();
  let fields: { data?: unknown; signature?: unknown };
  if (body.startsWith('{')) {
    try {
      fields = JSON.parse(body) as typeof fields;
    } catch {
      throw new UsageError('the input starts with { but is not JSON.');
    }
  } else {
    const form = new URLSearchParams(body);
    fields = { data: form.get('data') ?? undefined, signature: form.get('signature') ?? undefined };
  }
  if (typeof fields.data !== 'string' || typeof fields.signature !== 'string') {
    throw new UsageError('the input has no data and signature fields: expected data=…&signature=… or JSON.');
  }
  return { data: fields.data, signature: fields.signature };
}

function describeResult(result: VerifyResult, algorithm: SignatureAlgorithm, count: number): string {
  if (result.valid)
    return `signature: valid (${algorithm}, secret #${result.index}${count > 1 ? ` of ${count}` : ''})`;
  return `signature: INVALID (${algorithm}: ${REASONS[result.reason] ?? result.reason})`;
}

/**
 * `payhook verify`: checks a captured delivery with core's `verifySignature`, `decodeData` and
 * `parseNotification`, and prints it with card tokens masked.
 *
 * @example
 * const code = await verifyCommand(['--secret', 's3cret'], processIO());
 */
export async function verifyCommand(argv: string[], io: CliIO): Promise<number> {
  return runCommand('verify', io, async () => {
    const parsed = parseCommand(
      argv,
      {
        secret: { type: 'string', multiple: true },
        algorithm: { type: 'string' },
        file: { type: 'string' },
      },
      io,
      VERIFY_HELP,
    );
    if (parsed === undefined) return 0;
    const { values, positionals } = parsed;
    noArguments(positionals);
    const secrets = secretsFrom(values.secret, io);
    const algorithm = algorithmFrom(values.algorithm);
    const envelope = readEnvelope(await readInput(values.file, io, 'a captured body'));

    const result = verifySignature(envelope.data, envelope.signature, secrets, { algorithm });
    io.stdout(describeResult(result, algorithm, secrets.length));
    if (!result.valid) {
      const other: SignatureAlgorithm = algorithm === 'sha256' ? 'sha1' : 'sha256';
      if (verifySignature(envelope.data, envelope.signature, secrets, { algorithm: other }).valid) {
        io.stdout(`hint: it verifies with --algorithm ${other}.`);
      }
    }
    let ok = result.valid;
    let raw: Record<string, unknown>;
    try {
      raw = decodeData(envelope.data);
    } catch (error) {
      io.stdout(`data: cannot be decoded (${error instanceof WebhookError ? error.code : 'error'})`);
      return 1;
    }
    try {
      const n = parseNotification(raw);
      io.stdout(
        `notification: ${printable(`${n.method} ${n.status}${n.status_code ? ` ${n.status_code}` : ''}`)} (${n.kind}${result.valid ? '' : ', UNVERIFIED'})`,
      );
    } catch (error) {
      ok = false;
      const fields = error instanceof WebhookError && 'fields' in error ? (error.fields as string[]) : [];
      io.stdout(`notification: invalid (notification.invalid: ${printable(fields.join(', '))})`);
    }
    io.stdout(jsonText(maskNotification(raw), 2));
    return ok ? 0 : 1;
  });
}
