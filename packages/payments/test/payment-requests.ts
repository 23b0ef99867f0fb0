// The payment requests the API client's tests send (spec 4.1, 4.2), and the root tests against the fake service.

/** A direct purchase without its card fields. */
export const PURCHASE = {
  mode: 'direct',
  method: 'purchase' as const,
  amount: 12.5,
  currency: 'UAH',
  description: 'Tea',
  order_id: 'o-1',
};

/** The customer details a split purchase requires (spec 4.2). */
export const CUSTOMER = {
  customer_fname: 'Ada',
  customer_lname: 'Lovelace',
  customer_email: 'ada@example.com',
  customer_phone: '+380501234567',
  customer_ip: '203.0.113.7',
};

/** A sub-merchant of a split purchase. */
export const SUB_MERCHANT_ID = '0b6c7a4e-3f7d-4a8e-b1c2-9d0e1f2a3b4c';
