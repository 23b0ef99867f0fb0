import type { Scenario } from '../types.js';

/** (a) One purchase of 100, then a refund the app does not count: one charge of 100. */
export const COUNTED_CHARGES: Scenario = {
  name: 'planted-counted-charges',
  steps: [{ create: { as: 'order', amount: 100 } }, { refund: { payment: 'order', amount: 40 } }],
  expect: {
    http: [
      { get: '/orders/{order}', json: 'charges', equals: 1 },
      { get: '/orders/{order}', json: 'charged', equals: 100 },
    ],
  },
};

/** (b) A 3-D Secure purchase: `pending`, then `success` once the code is entered; the order must end paid. */
export const THREE_DS_STATUS: Scenario = {
  name: 'planted-last-webhook-wins',
  steps: [{ create: { as: 'order', amount: 100, card: 'threeDs' } }, { threeDs: { payment: 'order' } }],
  expect: { http: [{ get: '/orders/{order}', json: 'status', equals: 'success' }] },
};

/** (c) A purchase of 100 and a refund of 40: the app must have 100 paid and 40 refunded. */
export const PARKED_REFUND: Scenario = {
  name: 'planted-parked-refund',
  steps: [{ create: { as: 'order', amount: 100 } }, { refund: { payment: 'order', amount: 40 } }],
  expect: {
    http: [
      { get: '/orders/{order}', json: 'paid', equals: 100 },
      { get: '/orders/{order}', json: 'refunded', equals: 40 },
    ],
  },
};
