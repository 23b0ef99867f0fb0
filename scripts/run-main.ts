import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Runs a script's `main` when its file is the one run (not when another script imports it for its helpers); a
 * failure prints `<name>: FAILED` with the reason and exits 1.
 */
export function runMain(moduleUrl: string, name: string, main: () => void | Promise<void>): void {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(resolve(process.argv[1])).href) return;
  const fail = (error: unknown) => {
    console.error(`${name}: FAILED\n${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  };
  try {
    main()?.catch(fail);
  } catch (error) {
    fail(error);
  }
}
