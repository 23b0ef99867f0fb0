import { describe, expect, it } from 'vitest';
import { readSse } from './sse.js';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function all(chunks: string[]) {
  const messages = [];
  for await (const message of readSse(streamOf(chunks))) messages.push(message);
  return messages;
}

describe('readSse', () => {
  it('reads events split anywhere across chunks, with \\r\\n, \\n or \\r line ends', async () => {
    expect(
      await all(['id: 1\r', '\nevent: delivery\r\nda', 'ta: {"a":1}\r\n\r', '\nid: 2\rdata: x\r\r']),
    ).toEqual([
      { event: 'delivery', data: '{"a":1}', id: '1' },
      { event: 'message', data: 'x', id: '2' },
    ]);
  });

  it('joins data lines, skips comments and events without data, keeps the last id', async () => {
    expect(
      await all([': heartbeat\n\nretry: 1000\n\nevent: a\ndata: one\ndata:two\n\nid: 7\n\ndata\n\n']),
    ).toEqual([
      { event: 'a', data: 'one\ntwo', id: undefined },
      { event: 'message', data: '', id: '7' },
    ]);
  });
});
