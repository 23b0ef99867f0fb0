import type { Command } from './command.js';
import { driftCommand } from './drift.js';
import { inspectCommand } from './inspect.js';
import { type CliIO, printable } from './io.js';
import { operationCommand } from './operation.js';
import { queueCommand } from './queue.js';
import { reconcileCommand } from './reconcile.js';
import { relayCommand } from './relay.js';
import { replayCommand } from './replay.js';
import { resendCommand } from './resend.js';
import { scenarioCommand } from './scenario.js';
import { sendCommand } from './send.js';
import { serveCommand } from './serve.js';
import { signCommand } from './sign.js';
import { didYouMean } from './suggest.js';
import { verifyCommand } from './verify.js';

const HELP = `Usage: payhook <command> [options]

Commands:
  sign     sign a notification (JSON) and print the form body, data and signature
  send     post a signed fake notification to a webhook endpoint (purchase.success, refund.success, …)
  resend   ask the service (or 'payhook serve') to deliver an operation's webhook again (spec 4.3, 4.4)
  reconcile  ask the service to re-send the webhook of every order read from a file or stdin
  operation  capture, void, refund, split-capture or status: one call to the service (or 'payhook serve')
  verify   check a captured delivery read from standard input; card tokens are masked
  replay   post a capture file (core's createCapture) to an endpoint again, re-signed with a test secret
  inspect  a local page over a capture file and the fake's deliveries: filter, diff, edit, replay, save as fixture
  drift    count what a capture file's notifications carried beyond what payhook types (new fields, statuses…)
  serve    run the fake payment service
  scenario run a whole payment life (3-D Secure, refunds, subscriptions…) with delivery faults against an app; explore the faults that break it; list them
  queue    list, replay or discard the dead notifications of @payhook/queue; list or purge the waiting ones (--database URL or --redis URL)
  relay    forward a channel of a payhook-relay to an app on this machine; replay, status, channel create

Run 'payhook <command> --help' for a command's options.
Secrets may come from PAYHOOK_SECRET instead of --secret (argv is visible to other users in 'ps').`;

const COMMANDS: Record<string, Command> = {
  sign: signCommand,
  send: sendCommand,
  resend: resendCommand,
  reconcile: reconcileCommand,
  operation: operationCommand,
  verify: verifyCommand,
  replay: replayCommand,
  inspect: inspectCommand,
  drift: driftCommand,
  serve: serveCommand,
  scenario: scenarioCommand,
  queue: queueCommand,
  relay: relayCommand,
};

/**
 * Runs `payhook` with the arguments after the program name and returns the exit code (2 for usage errors).
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), processIO());
 */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.stderr : io.stdout)(HELP);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(
      `payhook: unknown command ${printable(JSON.stringify(name))}.${didYouMean(name, Object.keys(COMMANDS))}`,
    );
    io.stderr(HELP);
    return 2;
  }
  try {
    return await command(rest, io);
  } catch (error) {
    io.stderr(`payhook ${name}: ${printable(error instanceof Error ? error.message : String(error))}`);
    return 1;
  }
}
