import type { IdSource } from './ids.js';

/**
 * A POS project's credentials as the fake is configured with them; missing ones are generated.
 *
 * @example
 * new FakeService({ projects: [{ secret: 'a' }, { secret: 'b', sector: 'microfinance' }] });
 */
export interface FakeProjectOptions {
  /** The project's `pos_id` (a UUID). @default generated */
  posId?: string;
  /** The API key of `X-API-AUTH`. @default generated */
  apiKey?: string;
  /** The endpoints key of `X-API-KEY`. @default generated */
  endpointsKey?: string;
  /** The webhook signing secret (SECRET_KEY). */
  secret: string;
  /**
   * The API secret `X-API-AUTH` is checked against: the key of its HMAC, or the secret itself in the
   * `<WORD> <API_KEY>:<API_SECRET>` form. Public code uses one secret for both.
   * @default secret
   */
  apiSecret?: string;
  /** The merchant's sector, for core's sector rules (`microfinance`, `igaming`). */
  sector?: string;
  /** The merchant's name the hosted checkout shows. @default 'Payhook test shop' */
  merchantName?: string;
}

/**
 * A project the fake knows, every credential set.
 *
 * @example
 * const { posId, apiKey, endpointsKey } = fake.project;
 */
export interface FakeProject {
  readonly posId: string;
  readonly apiKey: string;
  readonly endpointsKey: string;
  readonly secret: string;
  /** The API secret `X-API-AUTH` is checked against (`secret` unless given). */
  readonly apiSecret: string;
  readonly sector: string | undefined;
  /** The name the hosted checkout shows. */
  readonly merchantName: string;
}

/** Fills in the credentials a project was not given. */
export function createProject(options: FakeProjectOptions, ids: IdSource): FakeProject {
  if (typeof options.secret !== 'string' || options.secret === '') {
    throw new TypeError('[@payhook/testing] a fake project needs a non-empty secret.');
  }
  if (
    options.apiSecret !== undefined &&
    (typeof options.apiSecret !== 'string' || options.apiSecret === '')
  ) {
    throw new TypeError("[@payhook/testing] a fake project's apiSecret must be a non-empty string.");
  }
  return {
    posId: options.posId ?? ids.uuid(),
    apiKey: options.apiKey ?? `ak_${ids.hex(12)}`,
    endpointsKey: options.endpointsKey ?? `ek_${ids.hex(12)}`,
    secret: options.secret,
    apiSecret: options.apiSecret ?? options.secret,
    sector: options.sector,
    merchantName: options.merchantName ?? 'Payhook test shop',
  };
}
