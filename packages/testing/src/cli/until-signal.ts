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
