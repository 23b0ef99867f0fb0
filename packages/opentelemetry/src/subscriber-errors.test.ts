import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import { signedForm } from '../../../test/support/signed-form.ts';

const SECRET = 'otel-throwing-secret-4c2a';
const PACKAGE = fileURLToPath(new URL('..', import.meta.url));

/**
 * A web process as in production, in a child (a subscriber's throw is rethrown by Node as an uncaught exception,
 * which ends the process it happens in): the built packages, a span processor that throws on every span, two
 * deliveries answered, then whatever `diag` said and whether the process is still there a moment later.
 */
const SCRIPT = `
import { diag, DiagLogLevel } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { createWebhookHandler } from '@payhook/core';
import { PayhookInstrumentation } from './dist/index.js';

diag.setLogger({ error: (message) => console.log('diag: ' + message), warn() {}, info() {}, debug() {}, verbose() {} }, DiagLogLevel.ERROR);
const failing = {
  onStart() { throw new Error('span processor broke on start'); },
  onEnd() { throw new Error('exporter broke on end'); },
  forceFlush: async () => {},
  shutdown: async () => {},
};
const instrumentation = new PayhookInstrumentation({ enabled: false });
instrumentation.setTracerProvider(new BasicTracerProvider({ spanProcessors: [failing] }));
instrumentation.enable();
const webhook = createWebhookHandler({ secret: process.env.SECRET, logger: false, handle: () => undefined });
const headers = { 'content-type': 'application/x-www-form-urlencoded' };
for (const body of JSON.parse(process.env.BODIES)) {
  const result = await webhook({ method: 'POST', headers, body }, undefined);
  console.log('answered ' + result.status + ' ' + result.outcome);
}
setTimeout(() => console.log('alive'), 50);
`;

describe('a throwing span processor (issue 34)', () => {
  it('answers every delivery, reports the error once through diag, and the process lives on', () => {
    const bodies = [
      signedForm(purchase({ payment_id: 'pay-1' }), SECRET),
      signedForm(purchase({ payment_id: 'pay-2' }), SECRET),
    ];
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], {
      cwd: PACKAGE,
      encoding: 'utf8',
      env: { ...process.env, SECRET, BODIES: JSON.stringify(bodies) },
      timeout: 30_000,
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      [
        'diag: @payhook/opentelemetry: the OpenTelemetry SDK threw while recording a payhook span or metric (a span processor, exporter or metric reader); the delivery was answered as usual. Later errors of this instrumentation are not reported; pass onError to see each.',
        'answered 200 handled',
        'answered 200 handled',
        'alive',
        '',
      ].join('\n'),
    );
    expect(result.status).toBe(0);
  });
});

describe('onError', () => {
  it('receives each error the SDK threw, and the delivery is answered', async () => {
    const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
    const { createWebhookHandler } = await import('@payhook/core');
    const { PayhookInstrumentation } = await import('./index.js');
    const errors: string[] = [];
    const instrumentation = new PayhookInstrumentation({
      enabled: false,
      onError: (error) => errors.push((error as Error).message),
    });
    const failing = {
      onStart() {},
      onEnd() {
        throw new Error('exporter broke on end');
      },
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    instrumentation.setTracerProvider(new BasicTracerProvider({ spanProcessors: [failing] }));
    instrumentation.enable();
    try {
      const webhook = createWebhookHandler({ secret: SECRET, logger: false, handle: () => undefined });
      const body = signedForm(purchase({ payment_id: 'pay-3' }), SECRET);
      const headers = { 'content-type': 'application/x-www-form-urlencoded' };
      const result = await webhook({ method: 'POST', headers, body }, undefined);
      expect([result.status, result.outcome]).toEqual([200, 'handled']);
      // The handler's span ends first, then the delivery's.
      expect(errors).toEqual(['exporter broke on end', 'exporter broke on end']);
    } finally {
      instrumentation.disable();
    }
  });

  it('without onError tells diag once, and an onError that throws is not let into the channel either', async () => {
    const { diag, DiagLogLevel } = await import('@opentelemetry/api');
    const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
    const { createWebhookHandler } = await import('@payhook/core');
    const { PayhookInstrumentation } = await import('./index.js');
    const failing = {
      onStart() {
        throw new Error('span processor broke on start');
      },
      onEnd() {},
      forceFlush: async () => {},
      shutdown: async () => {},
    };
    const said: string[] = [];
    const quiet = () => undefined;
    diag.setLogger(
      { error: (message) => said.push(message), warn: quiet, info: quiet, debug: quiet, verbose: quiet },
      DiagLogLevel.ERROR,
    );
    const deliver = async (instrumentation: InstanceType<typeof PayhookInstrumentation>, id: string) => {
      instrumentation.setTracerProvider(new BasicTracerProvider({ spanProcessors: [failing] }));
      instrumentation.enable();
      try {
        const webhook = createWebhookHandler({ secret: SECRET, logger: false, handle: () => undefined });
        const headers = { 'content-type': 'application/x-www-form-urlencoded' };
        const result = await webhook(
          { method: 'POST', headers, body: signedForm(purchase({ payment_id: id }), SECRET) },
          undefined,
        );
        return [result.status, result.outcome];
      } finally {
        instrumentation.disable();
      }
    };
    try {
      const once = new PayhookInstrumentation({ enabled: false });
      expect(await deliver(once, 'pay-4')).toEqual([200, 'handled']);
      expect(await deliver(once, 'pay-5')).toEqual([200, 'handled']);
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/^@payhook\/opentelemetry: the OpenTelemetry SDK threw/);
      const throwing = new PayhookInstrumentation({
        enabled: false,
        onError: () => {
          throw new Error('the hook broke too');
        },
      });
      expect(await deliver(throwing, 'pay-6')).toEqual([200, 'handled']);
      expect(said).toHaveLength(1);
    } finally {
      diag.disable();
    }
  });
});
