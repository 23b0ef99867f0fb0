import { type ArgumentsHost, Catch, type ExceptionFilter, Inject, Injectable, Module } from '@nestjs/common';
import { APP_FILTER, HttpAdapterHost } from '@nestjs/core';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { purchase } from '../../../examples/shared/src/deliveries.ts';
import {
  expectForwardedSignatureError,
  SECRET,
  tamperedForm,
  testOptions,
} from '../../../test/adapter-conformance.ts';
import { FORM, signedForm } from '../../../test/support/signed-form.ts';
import { PayhookModule, WebhookError } from '../src/index.ts';
import { NEST, nestServer, PLATFORMS } from './apps.ts';

const tampered = tamperedForm();
const seen: unknown[] = [];

/** An app's filter for core's refusals, provided with APP_FILTER so Nest injects into it. */
@Injectable()
@Catch(WebhookError)
class WebhookErrorFilter implements ExceptionFilter {
  constructor(@Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost) {}

  catch(error: WebhookError, host: ArgumentsHost): void {
    seen.push(error);
    const response = host.switchToHttp().getResponse();
    this.adapterHost.httpAdapter.reply(response, { forwarded: error.code }, error.status);
  }
}

function appModule(withFilter: boolean) {
  @Module({
    imports: [PayhookModule.forRoot({ ...testOptions(() => {}), forwardErrors: true })],
    providers: withFilter ? [{ provide: APP_FILTER, useClass: WebhookErrorFilter }] : [],
  })
  class AppModule {}
  return AppModule;
}

describe.each(PLATFORMS)(`${NEST}, %s platform: forwardErrors`, (platform) => {
  it("hands the refusal to Nest's exception filters as core's WebhookError with status and expose", async () => {
    seen.length = 0;
    const res = await request(await nestServer(platform, appModule(true)))
      .post('/webhooks')
      .type(FORM)
      .send(tampered);
    expect([res.status, res.body]).toEqual([401, { forwarded: 'signature.invalid' }]);
    expectForwardedSignatureError(seen);
  });

  it("forwards a refusal of a body it left unread, which Nest's body parsers then leave alone", async () => {
    seen.length = 0;
    // Over maxBodyBytes and over the 100 kB limit of Nest's parsers, which would refuse it with their own 413.
    const body = signedForm(purchase({ description: 'x'.repeat(200 * 1024) }), SECRET);
    const res = await request(await nestServer(platform, appModule(true)))
      .post('/webhooks')
      .type(FORM)
      .send(body);
    expect([res.status, res.body]).toEqual([413, { forwarded: 'payload.too_large' }]);
    expect(seen).toHaveLength(1);
  });

  it("gets Nest's answer to an unknown exception without a filter of the app's", async () => {
    const res = await request(await nestServer(platform, appModule(false)))
      .post('/webhooks')
      .type(FORM)
      .send(tampered);
    expect([res.status, res.body]).toEqual([500, { statusCode: 500, message: 'Internal server error' }]);
  });

  it('still answers successes itself', async () => {
    const res = await request(await nestServer(platform, appModule(true)))
      .post('/webhooks')
      .type(FORM)
      .send(signedForm(purchase(), SECRET));
    expect([res.status, res.text]).toEqual([200, '{"ok":true,"outcome":"handled"}']);
  });
});
