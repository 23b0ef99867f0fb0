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
// One project, not the root config's two (its NestJS 11 run has no nock tests), over the root's aliases. No JSON
// report: under CI the root config writes the suite's results.json, which .ci/run reads last.
const { projects: _projects, ...test } = config.test ?? {};
config.test = {
  ...test,
  include: ['packages/*/src/**/*.test.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  reporters: ['default'],
};
export default config;
