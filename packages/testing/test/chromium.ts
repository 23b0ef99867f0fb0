import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium, which scripts/ensure-services.sh installs (`apt-get install -y chromium`). */
const CHROMIUM = '/usr/bin/chromium';

/** True when the browser tests can run here; under CI they must (a missing Chromium fails them). */
export const canRunChromium: boolean = existsSync(CHROMIUM) || process.env.CI === 'true';

if (!canRunChromium) {
  console.warn(
    `[@payhook/testing] SKIPPING the hosted-checkout browser tests: ${CHROMIUM} is missing (apt-get install -y chromium).`,
  );
}

/** Headless Chromium that talks to nothing but the pages it is sent to. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
