#!/usr/bin/env node
import { processIO } from './cli/io.js';
import { runCli } from './cli/run.js';

// Until a command returns, exiting is a failure: a promise left pending with nothing to wake it must not
// end the process with status 0.
process.exitCode = 1;
runCli(process.argv.slice(2), processIO()).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
  },
);
