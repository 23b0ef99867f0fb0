import {
  type NotificationJson,
  purchase,
  recurringCharge,
  refund,
} from '../examples/shared/src/deliveries.ts';
import { encodeForm, envelope, FORM, signedForm } from '../test/support/signed-form.ts';

/** One webhook the demo posts, what it is, and what payhook must answer. */
export interface DemoStep {
  readonly what: string;
  readonly contentType: string;
  readonly body: string;
  /** `200 handled`, `200 duplicate`, or the refusal: `401 signature.invalid`. */
  readonly expected: string;
  /** For a handled step: the key of the line the application handler prints. */
  readonly key?: string;
}

const pending = purchase({
  status: 'pending',
  status_code: '2122',
  status_description: '3DS verification is required to finish the transaction',
  user_action_required: true,
  user_action_url: 'https://checkout.example/3ds/0b6c7a4e',
  processed_at: undefined,
});
const success = purchase();

function handled(what: string, notification: NotificationJson, secret: string, key: string): DemoStep {
  return { what, contentType: FORM, body: signedForm(notification, secret), expected: '200 handled', key };
}

function tampered(secret: string): string {
  const { signature } = envelope(success, secret);
  const { data } = envelope({ ...success, amount: 0.01 }, secret);
  return encodeForm({ data, signature });
}

/** The story the demo tells, signed with `secret` as the service would sign it. */
export function demoSteps(secret: string): DemoStep[] {
  const paymentKey = `${success.payment_id}:purchase`;
  return [
    handled('purchase pending: 3DS needed (2122)', pending, secret, `${paymentKey}:pending:2122`),
    handled('same purchase, now success (1000)', success, secret, `${paymentKey}:success:1000`),
    {
      what: 'exact redelivery of that success',
      contentType: FORM,
      body: signedForm(success, secret),
      expected: '200 duplicate',
    },
    {
      what: 'redelivery with a new field, later time',
      contentType: FORM,
      body: signedForm({ ...success, processed_at: '2025-03-14T09:31:00', bank_short_name: 'DEMO' }, secret),
      expected: '200 duplicate',
    },
    {
      what: 'tampered: amount changed after signing',
      contentType: FORM,
      body: tampered(secret),
      expected: '401 signature.invalid',
    },
    handled('refund of 100.00 UAH', refund(), secret, `${refund().operation_id}:refund:success:1000`),
    handled(
      'recurring charge #1 (transaction tx-1)',
      recurringCharge('tx-1'),
      secret,
      'tx-1:purchase:success:1000',
    ),
    handled(
      'recurring charge #2 (transaction tx-2)',
      recurringCharge('tx-2'),
      secret,
      'tx-2:purchase:success:1000',
    ),
    {
      what: 'malformed body (broken JSON)',
      contentType: 'application/json',
      body: '{"data": "eyJwYXltZW50X2lk',
      expected: '400 payload.malformed',
    },
  ];
}
