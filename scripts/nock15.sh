#!/usr/bin/env bash
# The nock tests on nock 15 under Node 22 (its interceptors need Node >= 22); `pnpm test` runs them on nock 14
# and Node 20. nock 15 goes into a throwaway directory, never into the workspace or its lockfile, so a clean
# clone runs this after `pnpm install`.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# Installed by Node 22's npm: npm picks versions whose engines fit the running Node, and current nock 15 releases
# declare node >= 22.20.
npx -y -p node@22 npm install --prefix "$dir" --no-audit --no-fund --loglevel=error nock@15 >/dev/null
echo "nock15: nock $(node -p "require('$dir/node_modules/nock/package.json').version") on Node 22"

EXPECT_NOCK_MAJOR=15 NOCK_DIR="$dir/node_modules/nock" npx -y -p node@22 node node_modules/vitest/vitest.mjs run \
  --config scripts/nock15.vitest.config.ts packages/testing/src/nock.test.ts packages/testing/src/fake/validation.test.ts
