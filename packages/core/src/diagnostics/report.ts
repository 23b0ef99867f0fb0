import type { WebhookError } from '../errors.js';
import { createHintLog } from '../verify/diagnosis.js';

/** Receives every refusal and store failure, for metrics and logs. Never sees a secret or a payload. */
export type ErrorHook = (error: WebhookError, request: { remoteAddress: string | undefined }) => void;

/** Where diagnostics go: a console-like logger, or `false` for none. */
export type Logger = Pick<Console, 'warn' | 'error'> | false;

/**
 * Sends every refusal and store failure to `onError`; to the logger, from 500 up, and a refusal with a hint (what
 * most likely made a signature fail) as a warning, a few a minute (`createHintLog`).
 */
export function createReport(
  onError: ErrorHook | undefined,
  logger: Logger,
): (error: WebhookError, remoteAddress: string | undefined) => void {
  const hintLog = createHintLog();
  return (error, remoteAddress) => {
    if (onError) {
      try {
        onError(error, { remoteAddress });
      } catch {
        // A failing hook must not change the answer.
      }
    }
    if (!logger) return;
    const warning = hintLog(error);
    if (warning !== undefined) {
      try {
        logger.warn(warning);
      } catch {
        // As below: a failing logger must not change the answer.
      }
    }
    if (error.status < 500) return;
    try {
      // What the application threw, with its stack; payhook's own causes (a store's error) likewise.
      if (error.cause instanceof Error) logger.error(`${error.message} (${error.code})`, error.cause);
      else logger.error(`${error.message} (${error.code})`);
    } catch {
      // A failing logger must not change the answer, nor crash the process from a background renewal.
    }
  };
}
