import { Injectable, type LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { type Delivery, type Notification, OnAnyNotification, PayhookModule } from '@payhook/nestjs';
import { printNotification } from '../../shared/src/output.ts';
import { serveExample } from '../../shared/src/serve.ts';

@Injectable()
class Notifications {
  // Any provider's method can take notifications, with whatever Nest injects into its class.
  @OnAnyNotification()
  print(notification: Notification, _req: unknown, delivery: Delivery): void {
    // Your code: fulfil the order, record the refund... It runs once per notification; throw to get it redelivered.
    printNotification(notification, delivery);
  }
}

// Nest's own lines go to stderr: stdout is one JSON line per notification.
const stderr: LoggerService = { log: console.error, warn: console.error, error: console.error };

await serveExample(async ({ secret, store }) => {
  // POST /webhooks, read before Nest's body parsers: no rawBody needed. Other methods on it: 405, Allow: POST.
  @Module({
    imports: [PayhookModule.forRoot({ secret, store, path: '/webhooks' })],
    providers: [Notifications],
  })
  class AppModule {}
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { logger: stderr });
  await app.init();
  return app.getHttpAdapter().getInstance();
});
