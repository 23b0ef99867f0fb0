/** Statuses of the public payment cycle; any other string the service sends is kept as it is. */
export type KnownStatus = 'init' | 'pending' | 'processing' | 'success' | 'failure';
export type Status = KnownStatus | (string & {});

/** Primary operations (spec 6.1). */
export type PrimaryMethod = 'purchase' | 'auth' | 'credit' | 'p2p' | 'lookup';
/** Secondary operations on a payment (spec 6.2). */
export type SecondaryMethod = 'capture' | 'void' | 'refund';
export type Method = PrimaryMethod | SecondaryMethod;

/** Commission object (spec 2.4): `fee`, `fixed_fee`, `percent_fee`. */
export interface Commission {
  amount: number;
  currency: string;
}

/** Why a payment was declined and when to retry (spec 2.4; sent as an object or as a JSON string). */
export interface LimitInfo {
  retry_after?: string;
  description?: string;
}

/** Recurring config (spec 2.5), present on a subscription's first payment and on each of its scheduled charges. */
export interface RecurringInfo {
  id: string;
  status: 'init' | 'active' | 'canceled' | (string & {});
}

interface NotificationFields {
  payment_id: string;
  order_id: string;
  pos_id: string;
  mode: 'direct' | 'hosted' | (string & {});
  amount: number;
  currency: string;
  status: Status;
  /** Normalised to a string: the service and its plugins send it as a number or a string. */
  status_code?: string;
  status_description?: string;
  transaction_id?: string;
  /** Zone-less as the service sends it (`YYYY-MM-DDTHH:MM:SS[.fff]`); read it with `parseTimestamp`. */
  created_at: string;
  processed_at?: string;
  fee?: Commission;
  fixed_fee?: Commission;
  percent_fee?: Commission;
  limit_info?: LimitInfo;
  /** Changeable-amount payments only: what the payer actually paid. */
  processed_amount?: number;
  processed_currency?: string;
  receipt_url?: string;
  /** The decoded object exactly as the service sent it, unknown fields included (not enumerable). */
  readonly raw: Readonly<Record<string, unknown>>;
}

/**
 * The optional fields of a payment record (spec 2.1) beyond what every notification carries: shared by primary
 * notifications and the API's payment responses.
 */
export interface PaymentDetails {
  gateway_order_id?: string;
  billing_order_id?: string;
  payway?: string;
  eci?: string;
  mcc?: string;
  options_3ds?: string;
  description?: string;
  user_action_required?: boolean;
  /** Where to send the customer for 3DS when `user_action_required` is true. */
  user_action_url?: string;
  cc_mask?: string;
  cc_token?: string;
  cc_token_expiration?: string;
  customer_id?: string;
  customer_ip?: string;
  customer_fname?: string;
  customer_lname?: string;
  customer_patronym?: string;
  customer_email?: string;
  customer_phone?: string;
  customer_country?: string;
  customer_birthday?: string;
  result_url?: string;
  payload?: string;
  bank_short_name?: string;
  /** Present on a recurring payment: the subscription's first payment and each scheduled charge alike. */
  recurring?: RecurringInfo;
}

/** A primary operation's notification (spec 6.1): purchase, auth, credit, p2p, lookup. */
export interface PrimaryNotification<M extends PrimaryMethod = PrimaryMethod>
  extends NotificationFields,
    PaymentDetails {
  readonly kind: 'primary';
  method: M;
}

/** A secondary operation's notification (spec 6.2): capture, void, refund. */
export interface SecondaryNotification<M extends SecondaryMethod = SecondaryMethod>
  extends NotificationFields {
  readonly kind: 'secondary';
  method: M;
  operation_id: string;
}

/** A notification whose method payhook does not know yet: checked against the primary required fields. */
export interface OtherNotification extends NotificationFields {
  readonly kind: 'other';
  method: string;
  operation_id?: string;
}

export type PurchaseNotification = PrimaryNotification<'purchase'>;
export type AuthNotification = PrimaryNotification<'auth'>;
export type CreditNotification = PrimaryNotification<'credit'>;
export type P2pNotification = PrimaryNotification<'p2p'>;
export type LookupNotification = PrimaryNotification<'lookup'>;
export type CaptureNotification = SecondaryNotification<'capture'>;
export type VoidNotification = SecondaryNotification<'void'>;
export type RefundNotification = SecondaryNotification<'refund'>;
/**
 * A notification of a recurring payment: a primary notification that carries `recurring`. That is the
 * subscription's first payment as well as each scheduled charge; the spec shows no field telling them apart.
 */
export type RecurringNotification = PrimaryNotification & { recurring: RecurringInfo };

/** Every notification, discriminated by `kind` and, within a kind, by `method`. */
export type Notification =
  | PurchaseNotification
  | AuthNotification
  | CreditNotification
  | P2pNotification
  | LookupNotification
  | CaptureNotification
  | VoidNotification
  | RefundNotification
  | OtherNotification;

/** The notification type each method name routes to. */
export interface NotificationByMethod {
  purchase: PurchaseNotification;
  auth: AuthNotification;
  credit: CreditNotification;
  p2p: P2pNotification;
  lookup: LookupNotification;
  capture: CaptureNotification;
  void: VoidNotification;
  refund: RefundNotification;
  recurring: RecurringNotification;
}

/**
 * What `on()` takes: a method, `recurring` (every notification carrying `recurring`: a subscription's first
 * payment and each scheduled charge), or either followed by a known status (`refund.success`).
 */
export type NotificationEvent = keyof NotificationByMethod | `${keyof NotificationByMethod}.${KnownStatus}`;

/** The notification type an event name narrows to. */
export type NotificationFor<E extends NotificationEvent> = E extends `${infer M}.${infer S}`
  ? M extends keyof NotificationByMethod
    ? NotificationByMethod[M] & { status: S }
    : never
  : E extends keyof NotificationByMethod
    ? NotificationByMethod[E]
    : never;

export const PRIMARY_METHODS: ReadonlySet<string> = new Set<PrimaryMethod>([
  'purchase',
  'auth',
  'credit',
  'p2p',
  'lookup',
]);
export const SECONDARY_METHODS: ReadonlySet<string> = new Set<SecondaryMethod>(['capture', 'void', 'refund']);

/**
 * True for a notification of a recurring payment (it carries `recurring`): the subscription's first payment or a
 * scheduled charge.
 *
 * @example
 * if (isRecurring(notification)) await extendSubscription(notification.recurring.id);
 */
export function isRecurring(notification: Notification): notification is RecurringNotification {
  return notification.kind === 'primary' && notification.recurring !== undefined;
}
