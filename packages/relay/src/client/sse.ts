/**
 * One Server-Sent Event: its `event` name (`message` when none was given), `data` (lines joined by `\n`) and
 * `id` when the event had one.
 */
export interface SseMessage {
  readonly event: string;
  readonly data: string;
  readonly id: string | undefined;
}

/** Splits a stream's text into lines as the SSE grammar does (`\r\n`, `\n` or `\r`), keeping the unfinished rest. */
function splitLines(buffer: string): { lines: string[]; rest: string } {
  const lines: string[] = [];
  let start = 0;
  for (let i = 0; i < buffer.length; i++) {
    const char = buffer[i];
    if (char !== '\n' && char !== '\r') continue;
    // A '\r' as the last character may be the first half of '\r\n': wait for the next chunk.
    if (char === '\r' && i === buffer.length - 1) break;
    lines.push(buffer.slice(start, i));
    if (char === '\r' && buffer[i + 1] === '\n') i++;
    start = i + 1;
  }
  return { lines, rest: buffer.slice(start) };
}

/**
 * The events of an SSE body, as they arrive (comments skipped). Ends when the body ends.
 *
 * @example
 * for await (const message of readSse(response.body!)) console.log(message.event, message.id);
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  const message = { event: '', data: [] as string[], id: undefined as string | undefined };
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // At the end, a last '\r' no longer waits for a '\n'.
      const text = done
        ? buffer.endsWith('\r')
          ? `${buffer}\n`
          : buffer
        : buffer + decoder.decode(value, { stream: true });
      const split = splitLines(text);
      buffer = split.rest;
      for (const line of split.lines) {
        const dispatched = readLine(message, line);
        if (dispatched) yield dispatched;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** Applies one line to the event being read; the event, once a blank line ends it (and it has data). */
function readLine(
  message: { event: string; data: string[]; id: string | undefined },
  line: string,
): SseMessage | undefined {
  if (line === '') {
    const event =
      message.data.length > 0
        ? { event: message.event || 'message', data: message.data.join('\n'), id: message.id }
        : undefined;
    message.event = '';
    message.data = [];
    return event;
  }
  if (line.startsWith(':')) return undefined;
  const colon = line.indexOf(':');
  const field = colon === -1 ? line : line.slice(0, colon);
  const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
  if (field === 'event') message.event = value;
  else if (field === 'data') message.data.push(value);
  else if (field === 'id') message.id = value;
  return undefined;
}
