import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** The child's next IPC message; rejects, instead of waiting forever, if the child exits first. */
export async function nextMessage<T>(child: ChildProcess, what: string): Promise<T> {
  const stop = new AbortController();
  try {
    const [message] = await Promise.race([
      once(child, 'message', { signal: stop.signal }),
      once(child, 'exit', { signal: stop.signal }).then(([code, signal]) => {
        throw new Error(`${what}: the child process exited (${signal ?? code}) before answering`);
      }),
    ]);
    return message as T;
  } finally {
    stop.abort();
  }
}
