import { describe, expect, it } from 'vitest';
import { formBody, post, purchase, SECRET } from '../../test/fixtures.js';
import type { WebhookError } from '../errors.js';
import { createWebhookHandler } from '../handler.js';
import { invalidNotificationObject } from '../notification/parse.js';
import { type CapturedDelivery, createCapture } from './capture.js';

/** One delivery of `body` to a handler with a capture: its answer, its line, and the error `onError` saw. */
async function captureOne(body: string) {
  const lines: CapturedDelivery[] = [];
  const errors: WebhookError[] = [];
  const capture = createCapture({ write: (line) => void lines.push(JSON.parse(line) as CapturedDelivery) });
  const webhook = createWebhookHandler({
    secret: SECRET,
    capture,
    logger: false,
    handle: () => {},
    onError: (error) => void errors.push(error),
  });
  const result = await webhook(post(body), undefined);
  await capture.flush();
  return { result, lines, errors };
}

describe('capture of a delivery whose signature matched but whose notification did not parse', () => {
  it('keeps the decoded object as sent, masked as a handled delivery is: inspect, replay and drift can show it', async () => {
    const { order_id: _missing, ...sent } = purchase({
      customer_email: 'jo@example.com',
      amount: 'n/a',
      loyalty_points: 12,
    });
    const { result, lines, errors } = await captureOne(formBody(sent));
    expect([result.status, result.error?.code]).toEqual([400, 'notification.invalid']);
    expect(lines).toEqual([
      expect.objectContaining({ v: 3, status: 400, outcome: 'refused', code: 'notification.invalid' }),
    ]);
    expect(lines[0]!.notification).toEqual({
      ...sent,
      cc_mask: '[masked]',
      cc_token: '[masked]',
      customer_email: '[masked]',
    });
    expect(lines[0]).not.toHaveProperty('key');
    // The object is not on the error onError sees: nothing there to log by mistake.
    expect(Object.values(errors[0]!)).not.toContainEqual(
      expect.objectContaining({ payment_id: sent.payment_id }),
    );
    expect(JSON.stringify(errors[0])).not.toContain('jo@example.com');
  });

  it('keeps nothing for a forged delivery of the same notification: refused before anything is decoded', async () => {
    const { order_id: _missing, ...sent } = purchase();
    const { result, lines } = await captureOne(formBody(sent, 'another-secret'));
    expect([result.status, result.error?.code]).toEqual([401, 'signature.invalid']);
    expect(lines[0]).not.toHaveProperty('notification');
    expect(invalidNotificationObject(result.error)).toBeUndefined();
  });

  it('keeps nothing for data that is not a JSON object: there is no notification to show', async () => {
    const { lines, result } = await captureOne(formBody([purchase()]));
    expect(result.error?.code).toBe('data.not_object');
    expect(lines[0]).not.toHaveProperty('notification');
  });
});
