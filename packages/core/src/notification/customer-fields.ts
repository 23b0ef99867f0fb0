/** The customer details spec 2.1 lists on a payment record (ids, names, contacts, country, birthday). */
export const CUSTOMER_FIELDS = [
  'customer_id',
  'customer_ip',
  'customer_fname',
  'customer_lname',
  'customer_patronym',
  'customer_email',
  'customer_phone',
  'customer_country',
  'customer_birthday',
] as const;
