import type { IncomingMessage } from 'node:http';
import { Injectable, Module } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import {
  itAnswersEveryStatus,
  itAnswersTimeout,
  itDefersContinue,
  itRefusesRepeatedJsonFields,
  itRunsInlineHandlersInTheRequest,
} from '../../../test/adapter-conformance.ts';
import { NEST, nestServer, PLATFORMS } from '../test/apps.ts';
import {
  type Delivery,
  deferContinue,
  type Notification,
  OnAnyNotification,
  OnNotification,
  PayhookModule,
  type PayhookModuleOptions,
  type PurchaseNotification,
} from './index.ts';

function appModule(options: PayhookModuleOptions, providers: (new (...args: never[]) => object)[] = []) {
  @Module({ imports: [PayhookModule.forRoot(options)], providers })
  class AppModule {}
  return AppModule;
}

describe.each(PLATFORMS)(`${NEST}, %s platform, with Nest's default body parsers`, (platform) => {
  itAnswersEveryStatus((options) => nestServer(platform, appModule({ ...options, path: '/webhooks' })));
  itAnswersTimeout((options) => nestServer(platform, appModule({ ...options, path: '/webhooks' })));
  // Mounted before Nest's body parsers, the module reads the JSON bytes itself.
  itRefusesRepeatedJsonFields((options) =>
    nestServer(platform, appModule({ ...options, path: '/webhooks' })),
  );
  itDefersContinue(async (options) =>
    deferContinue(await nestServer(platform, appModule({ ...options, path: '/webhooks' }))),
  );
  itRunsInlineHandlersInTheRequest((options, { inline, inlineAny, queued }) => {
    @Injectable()
    class Orders {
      @OnNotification('purchase', { inline: true })
      fulfil(payment: PurchaseNotification, req: IncomingMessage | undefined, delivery: Delivery) {
        return inline(payment, req, delivery);
      }

      @OnAnyNotification({ inline: true })
      audit(notification: Notification, req: IncomingMessage | undefined, delivery: Delivery) {
        return inlineAny(notification, req, delivery);
      }

      @OnNotification('purchase')
      ship(payment: PurchaseNotification, req: IncomingMessage | undefined, delivery: Delivery) {
        return queued(payment, req, delivery);
      }
    }
    return nestServer(platform, appModule({ ...options, path: '/webhooks' }, [Orders]));
  });
});

describe('a secret read from an unset environment variable', () => {
  it('fails when the app is created, naming the option and the cause', async () => {
    expect(process.env.PAYHOOK_UNSET_SECRET).toBeUndefined();
    await expect(
      nestServer('express', appModule({ secret: process.env.PAYHOOK_UNSET_SECRET! })),
    ).rejects.toThrow(
      new TypeError(
        "[@payhook/core] the secret option is undefined: pass the project's secret (SECRET_KEY in the service's settings) as a string, an { id, secret } object, an array of them, or a function of pos_id. If it is read from an environment variable (secret: process.env.WEBHOOK_SECRET!), that variable is not set, or is empty, where this process runs.",
      ),
    );
  });
});
