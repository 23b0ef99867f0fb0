// The nock tests against another nock: `scripts/nock15.sh` installs nock 15 outside the repo and points
// NOCK_DIR at it; everything else is the root config.
import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../vitest.config.js';

const nockDir = process.env.NOCK_DIR;
if (!nockDir) throw new Error('NOCK_DIR must name the directory of the nock package to test against.');

const config = mergeConfig(
  base,
  defineConfig({
    resolve: {
      alias: [
        { find: /^nock$/, replacement: nockDir },
        { find: /^nock\/package\.json$/, replacement: `${nockDir}/package.json` },
      ],
    },
  }),
);
// No JSON report: under CI the root config writes the suite's results.json, which .ci/run reads last.
config.test = { ...config.test, reporters: ['default'] };
export default config;
