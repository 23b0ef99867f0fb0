/**
 * Runs a long-lived command (`serve`, `inspect`) until SIGINT or SIGTERM aborts its signal, then returns its
 * exit code.
 */
export async function untilSignal(run: (signal: AbortSignal) => Promise<number>): Promise<number> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await run(stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** Resolves once `signal` aborts (at once when it has): where a long-lived command waits before it closes. */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
