import { replayableLines, resign } from '../replay.js';
import { algorithmFrom, httpUrlFrom, onePositional, positiveInteger, readInput, UsageError } from './args.js';
import { defineCommand } from './command.js';
import { type CliIO, printable } from './io.js';
import { clipReply, post } from './post.js';

const REPLAY_HELP = `Usage: payhook replay FILE --url URL [--resign SECRET] [options]

Posts every delivery of a capture file (JSON lines written by core's createCapture) to a webhook endpoint, in
order, each signed again with the test secret, and prints what production answered then and the endpoint now.
Lines refused before verification carry no notification and are skipped. A line that is not a captured delivery
(not JSON, or a field of the wrong type) stops it before anything is posted: exit 2, naming the line and the field;
with --skip-torn a line that is not JSON (torn by a full disk) is reported by its number and skipped instead.
Exits 0 when every reply is 2xx.

Options:
  --url URL          the webhook endpoint (http or https)
  --resign SECRET    the secret the endpoint under test is configured with (or set PAYHOOK_SECRET)
  --algorithm A      sha256 (default) or sha1
  --timeout MS       per request (default 10000)
  --skip-torn        skip the lines that are not JSON, naming each on standard error, and replay the others
  -h, --help         this help

Example:
  PAYHOOK_SECRET=test-secret payhook replay incident.jsonl --url http://127.0.0.1:3000/webhooks`;

/** `payhook replay`: a production capture against a local endpoint, re-signed. */
export const replayCommand = defineCommand({
  help: REPLAY_HELP,
  options: { text: 'url resign algorithm timeout', flag: 'skip-torn' },
  positionals: true,
  run: async ({ values, positionals }, io) => {
    const file = onePositional(positionals, 'name the capture file.', 'name one capture file.');
    const url = httpUrlFrom('--url', values.url);
    const secret = values.resign ?? io.env.PAYHOOK_SECRET;
    if (secret === undefined || secret === '') {
      throw new UsageError('no secret to sign with: pass --resign SECRET or set PAYHOOK_SECRET.');
    }
    const algorithm = algorithmFrom(values.algorithm);
    const timeout = positiveInteger('--timeout', values.timeout, 10_000);
    const text = await readInput(file, io, 'the capture');
    const lines = capturedLines(text, file === '-' ? 'standard input' : file, values['skip-torn'], io);
    let failed = 0;
    for (const { line, captured } of lines) {
      const signed = resign(captured, secret, algorithm);
      const n = captured.notification;
      const retryAfter = captured.answerHeaders?.['retry-after'];
      const then = `${captured.status} ${printable(captured.code ?? captured.outcome)}${retryAfter === undefined ? '' : `, Retry-After ${printable(retryAfter)}`}`;
      const what = `line ${line}: ${shown(n.method)} ${shown(n.status)} order ${shown(n.order_id)} (captured ${then})`;
      try {
        const { status, text: reply } = await post(url, signed.headers, signed.body, timeout);
        if (status < 200 || status > 299) failed++;
        io.stdout(`${what} → ${status} ${printable(clipReply(reply))}`);
      } catch (error) {
        failed++;
        io.stderr(
          `${what} → no answer: ${printable(error instanceof Error ? error.message : String(error))}`,
        );
      }
    }
    io.stdout(`replayed ${lines.length}: ${lines.length - failed} answered 2xx, ${failed} not`);
    return failed === 0 ? 0 : 1;
  },
});

/** The replayable lines; a torn line (not JSON) is a usage error unless `skipTorn`, then named on stderr. */
function capturedLines(
  text: string,
  source: string,
  skipTorn: boolean | undefined,
  io: CliIO,
): ReturnType<typeof replayableLines> {
  const torn: number[] = [];
  let lines: ReturnType<typeof replayableLines>;
  try {
    lines = replayableLines(text, source, { onTornLine: (line) => void torn.push(line) });
  } catch (error) {
    throw new UsageError((error as Error).message.replace('[@payhook/testing] ', ''));
  }
  if (torn.length > 0 && !skipTorn) {
    throw new UsageError(
      `${source}, line ${torn[0]}: not JSON (a capture has one object per line); --skip-torn replays the other lines.`,
    );
  }
  for (const line of torn) io.stderr(`line ${line}: torn (not JSON), skipped`);
  return lines;
}

/** A notification field for the progress line: text or a number as it is, anything else (or nothing) as `?`. */
function shown(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? printable(String(value)) : '?';
}
