import { describe, expect, it } from 'vitest';
import { parseBin, UsageError } from './bin-options.js';

const SECRET = 's'.repeat(32);
const env = { PAYHOOK_RELAY_SIGNING_SECRET: SECRET, PAYHOOK_RELAY_ADMIN_TOKEN: 'a'.repeat(16) };

function usage(argv: string[], environment: Record<string, string> = env): string {
  try {
    parseBin(argv, environment);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('no UsageError');
}

describe('payhook-relay arguments', () => {
  it('defaults: port 8443 on 0.0.0.0, a file journal in ./payhook-relay-data, secrets from the environment', () => {
    expect(parseBin([], env)).toEqual({
      port: 8443,
      host: '0.0.0.0',
      journal: { kind: 'file', directory: './payhook-relay-data' },
      signingSecret: SECRET,
      adminToken: 'a'.repeat(16),
      publicUrl: undefined,
      allowedSenders: undefined,
      trustProxy: false,
      tls: undefined,
      retention: {},
      verifySecret: undefined,
    });
  });

  it('reads each journal kind from --journal or PAYHOOK_RELAY_JOURNAL', () => {
    expect(parseBin(['--journal', 'memory'], env)).toMatchObject({ journal: { kind: 'memory' } });
    expect(parseBin(['--journal', 'postgres://h/db', '--table-prefix', 'relay_x'], env)).toMatchObject({
      journal: { kind: 'postgres', connectionString: 'postgres://h/db', prefix: 'relay_x' },
    });
    expect(parseBin([], { ...env, PAYHOOK_RELAY_JOURNAL: 'redis://h:6379' })).toMatchObject({
      journal: { kind: 'redis', url: 'redis://h:6379' },
    });
    expect(usage(['--journal', '/data', '--table-prefix', 'x'])).toBe(
      '--table-prefix goes with a postgres:// journal.',
    );
  });

  it('reads a Redis Cluster journal: redis+cluster:// with its nodes comma-separated, credentials and TLS', () => {
    expect(parseBin(['--journal', 'redis+cluster://10.0.0.1:7000,10.0.0.2:7001'], env)).toMatchObject({
      journal: {
        kind: 'redis-cluster',
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: '10.0.0.2', port: 7001 },
        ],
        tls: false,
      },
    });
    expect(parseBin(['--journal', 'rediss+cluster://relay:p%40ss@redis-0'], env)).toMatchObject({
      journal: {
        kind: 'redis-cluster',
        nodes: [{ host: 'redis-0', port: 6379 }],
        username: 'relay',
        password: 'p@ss',
        tls: true,
      },
    });
    expect(usage(['--journal', 'redis+cluster://u:secret@h:1,h:x'])).toBe(
      'a redis+cluster:// journal node is not host:port.',
    );
    // A URL of a scheme it does not know is not a directory name: a typo must not journal to ./redis+clustr:/….
    expect(usage(['--journal', 'redis+clustr://u:secret@h:1'])).toBe(
      '--journal takes a directory, postgres://, redis://, redis+cluster:// or memory, not a redis+clustr:// URL.',
    );
    expect(usage(['--journal', 'redis+cluster://'])).toBe(
      'a redis+cluster:// journal names its nodes: redis+cluster://host:port[,host:port…].',
    );
  });

  it('reads the edge checks, retention, TLS and the public URL', () => {
    const config = parseBin(
      [
        '--allowed-senders',
        'service',
        '--trust-proxy',
        '2',
        '--max-age',
        '30m',
        '--max-events',
        '500',
        '--tls-cert',
        'c.pem',
        '--tls-key',
        'k.pem',
        '--public-url',
        'https://relay.example.com',
        '--port',
        '443',
      ],
      env,
    );
    expect(config).toMatchObject({
      allowedSenders: ['35.187.74.148'],
      trustProxy: 2,
      retention: { maxAgeMs: 1_800_000, maxEvents: 500 },
      tls: { cert: 'c.pem', key: 'k.pem' },
      publicUrl: 'https://relay.example.com',
      port: 443,
    });
    expect(parseBin(['--allowed-senders', '1.2.3.4, 5.6.7.8'], env)).toMatchObject({
      allowedSenders: ['1.2.3.4', '5.6.7.8'],
    });
    expect(parseBin(['--max-age', '7d'], env)).toMatchObject({ retention: { maxAgeMs: 604_800_000 } });
  });

  it('refuses what it cannot use, naming it', () => {
    expect(usage([], {})).toMatch(/PAYHOOK_RELAY_SIGNING_SECRET to 32 characters/);
    expect(usage(['--tls-cert', 'c.pem'])).toBe('--tls-cert and --tls-key go together.');
    expect(usage(['--verify-signature'])).toBe('--verify-signature needs PAYHOOK_SECRET.');
    expect(usage(['--max-age', 'soon'])).toMatch(/--max-age must be a duration/);
    expect(usage(['--port', 'eighty'])).toMatch(/--port must be a whole number/);
    expect(usage(['--bogus'])).toMatch(/Unknown option '--bogus'/);
    expect(usage(['serve'])).toBe('unexpected argument "serve".');
  });

  it('takes the webhook secret for --verify-signature from PAYHOOK_SECRET only', () => {
    expect(parseBin(['--verify-signature'], { ...env, PAYHOOK_SECRET: 'w' })).toMatchObject({
      verifySecret: 'w',
    });
  });

  it('answers help, and key CHANNEL', () => {
    expect(parseBin(['--help'], {})).toEqual({ help: true });
    expect(parseBin(['key', 'alice'], env)).toEqual({ key: 'alice', signingSecret: SECRET });
  });
});
