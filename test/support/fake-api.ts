import { hmacRequestSigner } from '@payhook/payments';
import {
  type AuthCheck,
  type FakeService,
  type FakeServiceOptions,
  startFakeServer,
} from '@payhook/testing/fake';
import { mockPaymentApi } from '@payhook/testing/nock';

/** The fake service behind nock or a real HTTP server, and what it was asked. */
export interface FakeApi {
  fake: FakeService;
  baseUrl: string;
  /** The path of every authenticated API call. */
  paths: string[];
  /** The `X-API-AUTH` signatures the fake checked. */
  signatures: string[];
  close(): Promise<void>;
}

/**
 * Starts the fake behind `mockPaymentApi` (`nock`, intercepting `options.baseUrl`, by default one of its own) or
 * `startFakeServer` (`server`, on 127.0.0.1), checking the default request signature: HMAC-SHA256 of the project's secret over the raw body
 * ('' for a GET).
 */
export async function startFakeApi(
  transport: 'nock' | 'server',
  options: FakeServiceOptions,
): Promise<FakeApi> {
  const paths: string[] = [];
  const signatures: string[] = [];
  const verifyAuth = (check: AuthCheck) => {
    paths.push(check.path);
    signatures.push(check.signature);
    return hmacRequestSigner(check.project.secret)(check) === check.signature;
  };
  if (transport === 'nock') {
    const api = mockPaymentApi({
      verifyAuth,
      ...options,
      baseUrl: options.baseUrl ?? `https://pay-${process.pid}.fake.test`,
    });
    return { fake: api.fake, baseUrl: api.baseUrl, paths, signatures, close: async () => api.restore() };
  }
  const server = await startFakeServer({ verifyAuth, ...options });
  return { fake: server.fake, baseUrl: server.url, paths, signatures, close: () => server.close() };
}

/** The API settings of the fake's project, keyed with `apiSecret`, the secret the fake's `verifyAuth` checks. */
export function apiOf(service: FakeApi, apiSecret: string) {
  const { posId, apiKey, endpointsKey } = service.fake.project;
  return { baseUrl: service.baseUrl, posId, apiKey, endpointsKey, apiSecret };
}
