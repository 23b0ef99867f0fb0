#!/usr/bin/env node
import { HELP, parseBin, UsageError } from './bin-options.js';
import { startRelay } from './bin-serve.js';
import { channelKey } from './forward-header.js';

// `payhook-relay`: the relay as a Node.js server, configured from flags and the environment.

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseBin>;
  try {
    parsed = parseBin(argv, process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`payhook-relay: ${error.message}\nRun 'payhook-relay --help' for usage.`);
    return 2;
  }
  if ('help' in parsed) {
    console.info(HELP);
    return 0;
  }
  if ('key' in parsed) {
    console.info(await channelKey(parsed.signingSecret, parsed.key));
    return 0;
  }
  const running = await startRelay(parsed);
  const stop = () => {
    void running.close().finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (error: unknown) => {
    console.error(`payhook-relay: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
