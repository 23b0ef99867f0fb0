import type { ClaimResult } from './contract.js';

/** The two claim answers without a token: every store hands out these objects rather than a new one per claim. */
export const DUPLICATE: ClaimResult = { status: 'duplicate' };
export const IN_FLIGHT: ClaimResult = { status: 'in_flight' };
