import { SIGN_VARIANTS, type SignVariant, signWebhook } from '../sign.js';
import { algorithmFrom, readInput, secretsFrom, UsageError } from './args.js';
import { defineCommand } from './command.js';
import { jsonText } from './io.js';

const SIGN_HELP = `Usage: payhook sign [--secret S] [--file notification.json | -] [options]

Signs a notification (JSON) as the payment service does and prints the form body, data and signature.
Reads the notification from --file, or from standard input with '-' or no --file.

Options:
  --secret S        the project secret (or set PAYHOOK_SECRET, which keeps it out of 'ps')
  --file PATH|-     the notification JSON (default: standard input)
  --algorithm A     sha256 (default) or sha1
  --variant V       ${SIGN_VARIANTS.join(' | ')} (default exact)
  --format F        text (default: body, data, signature), body (the form body only, to pipe into
                    'payhook verify' or save for curl --data-binary @file: no newline after it unless
                    standard output is a terminal), or json
  -h, --help        this help

Example:
  PAYHOOK_SECRET=s3cret payhook sign --file purchase.json --format body | PAYHOOK_SECRET=s3cret payhook verify`;

const FORMATS = ['text', 'body', 'json'] as const;

export function variantFrom(value: string | undefined): SignVariant | undefined {
  if (value === undefined || (SIGN_VARIANTS as readonly string[]).includes(value)) {
    return value as SignVariant | undefined;
  }
  throw new UsageError(`--variant must be one of ${SIGN_VARIANTS.join(', ')}, not ${JSON.stringify(value)}.`);
}

/**
 * `payhook sign`: signs a notification read from a file or standard input.
 *
 * @example
 * const code = await signCommand(['--secret', 's3cret', '--file', 'purchase.json'], processIO());
 */
export const signCommand = defineCommand({
  help: SIGN_HELP,
  options: { text: 'file algorithm variant format', list: 'secret' },
  positionals: true,
  run: async ({ values, positionals }, io) => {
    if (positionals.length > 1 || (positionals.length === 1 && positionals[0] !== '-')) {
      throw new UsageError(`unexpected argument ${JSON.stringify(positionals.find((p) => p !== '-'))}.`);
    }
    if (positionals[0] === '-' && values.file !== undefined) {
      throw new UsageError("pass either --file or '-', not both.");
    }
    const format = values.format ?? 'text';
    if (!(FORMATS as readonly string[]).includes(format)) {
      throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, not ${JSON.stringify(format)}.`);
    }
    const [secret] = secretsFrom(values.secret, io);
    const algorithm = algorithmFrom(values.algorithm);
    const variant = variantFrom(values.variant);
    const text = await readInput(values.file, io, 'a notification (JSON)');
    let notification: unknown;
    try {
      notification = JSON.parse(text);
    } catch {
      throw new UsageError('the input is not JSON: expected one notification object.');
    }
    if (notification === null || typeof notification !== 'object' || Array.isArray(notification)) {
      throw new UsageError('the input is not a JSON object: expected one notification object.');
    }
    const signed = signWebhook(notification, secret!, { algorithm, variant });
    // A newline after the body would be sent by `curl --data-binary @file` and refused by the handler.
    if (format === 'body' && io.write && !io.stdoutIsTerminal) io.write(signed.body);
    else if (format === 'body') io.stdout(signed.body);
    else if (format === 'json') io.stdout(jsonText(signed, 2));
    else {
      io.stdout(`body       ${signed.body}`);
      io.stdout(`data       ${signed.data}`);
      io.stdout(`signature  ${signed.signature}`);
      io.stdout(`header     content-type: ${signed.headers['content-type']}`);
    }
    return 0;
  },
});
