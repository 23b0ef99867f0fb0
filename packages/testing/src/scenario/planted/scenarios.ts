import type { Scenario } from '../types.js';

/** (a) Two purchases (100 and 50), a refund the app does not count, a day: one charge each. */
export const COUNTED_CHARGES: Scenario = {
  name: 'planted-counted-charges',
  steps: [
    { create: { as: 'order', amount: 100 } },
    { create: { as: 'other', amount: 50 } },
    { refund: { payment: 'order', amount: 40 } },
    { advance: '1d' },
  ],
  expect: {
    http: [
      { get: '/orders/{order}', json: 'charges', equals: 1 },
      { get: '/orders/{order}', json: 'charged', equals: 100 },
      { get: '/orders/{other}', json: 'charges', equals: 1 },
      { get: '/orders/{other}', json: 'charged', equals: 50 },
    ],
  },
};

/**
 * (b) A 3-D Secure purchase (`pending`, then `success` once the code is entered) beside a plain one, then a refund of
 * the plain one: both orders must end `success`.
 */
export const THREE_DS_STATUS: Scenario = {
  name: 'planted-last-webhook-wins',
  steps: [
    { create: { as: 'order', amount: 100, card: 'threeDs' } },
    { create: { as: 'other', amount: 50 } },
    { threeDs: { payment: 'order' } },
    { refund: { payment: 'other', amount: 10 } },
  ],
  expect: {
    http: [
      { get: '/orders/{order}', json: 'status', equals: 'success' },
      { get: '/orders/{other}', json: 'status', equals: 'success' },
    ],
  },
};

/** (c) Purchases of 100 and 60, a refund of 40 of the first, all 60 of the second, a day: what each app keeps. */
export const PARKED_REFUND: Scenario = {
  name: 'planted-parked-refund',
  steps: [
    { create: { as: 'order', amount: 100 } },
    { create: { as: 'other', amount: 60 } },
    { refund: { payment: 'order', amount: 40 } },
    { refund: { payment: 'other' } },
    { advance: '1d' },
  ],
  expect: {
    http: [
      { get: '/orders/{order}', json: 'paid', equals: 100 },
      { get: '/orders/{order}', json: 'refunded', equals: 40 },
      { get: '/orders/{other}', json: 'paid', equals: 60 },
      { get: '/orders/{other}', json: 'refunded', equals: 60 },
    ],
  },
};
