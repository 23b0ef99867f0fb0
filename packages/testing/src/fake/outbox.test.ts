import { decodeData } from '@payhook/core';
import { describe, expect, it } from 'vitest';
import { LOST_ATTEMPT, Outbox } from './outbox.js';
import type { WebhookMessage } from './transport.js';

function outbox() {
  let now = Date.parse('2026-01-01T09:00:00Z');
  const received: string[] = [];
  const box = new Outbox({
    now: () => now,
    transport: async (message: WebhookMessage) => {
      received.push(String((decodeData(message.data) as { n: number }).n));
      return { status: 200, body: '' };
    },
  });
  return { box, received, advance: (ms: number) => (now += ms) };
}

describe('Outbox faults', () => {
  it('holds webhooks enqueued under hold, alone, and resume releases them newest first with reverse', async () => {
    const { box, received } = outbox();
    box.setFaults({ hold: true });
    box.enqueue('http://app/webhooks', { n: 1 }, 's');
    box.enqueue('http://app/webhooks', { n: 2 }, 's');
    box.setFaults({});
    box.enqueue('http://app/webhooks', { n: 3 }, 's');
    await box.idle();
    expect([received, box.held]).toEqual([['3'], 2]);
    await box.resume({ reverse: true });
    expect(received).toEqual(['3', '2', '1']);
  });

  it('loses the first attempt under loseFirstAttempt and sends it again on the retry schedule', async () => {
    const { box, received, advance } = outbox();
    box.setFaults({ loseFirstAttempt: true });
    const id = box.enqueue('http://app/webhooks', { n: 1 }, 's');
    await box.idle();
    expect(received).toEqual([]);
    expect(box.attempts.map((a) => [a.webhookId, a.attempt, a.ok, a.error])).toEqual([
      [id, 1, false, LOST_ATTEMPT],
    ]);
    advance(60_000);
    await box.run();
    expect(received).toEqual(['1']);
    expect(box.attempts.map((a) => [a.attempt, a.ok])).toEqual([
      [1, false],
      [2, true],
    ]);
  });
});
