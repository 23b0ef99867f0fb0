import {
  type DynamicModule,
  Inject,
  type MiddlewareConsumer,
  Module,
  type NestModule,
  type Provider,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { throwRefusal } from './mount.js';
import { PAYHOOK_OPTIONS, type PayhookModuleAsyncOptions, type PayhookModuleOptions } from './options.js';
import { PayhookWebhooks } from './webhooks.js';

/**
 * Receives the payment service's webhooks in a Nest app, on the Express or the Fastify platform, with Nest's
 * default body parsers on and no `rawBody`: every decision (answers, duplicates, secrets) is core's, as with
 * @payhook/express and @payhook/koa. Notifications go to the methods decorated with `@OnNotification`.
 *
 * @example
 * @Module({
 *   imports: [PayhookModule.forRoot({ secret: process.env.WEBHOOK_SECRET!, path: '/webhooks' })],
 *   providers: [Orders],
 * })
 * class AppModule {}
 */
@Module({})
export class PayhookModule implements NestModule {
  constructor(@Inject(PAYHOOK_OPTIONS) private readonly options: PayhookModuleOptions) {}

  /** The module with these options. */
  static forRoot(options: PayhookModuleOptions): DynamicModule {
    return PayhookModule.with({ provide: PAYHOOK_OPTIONS, useValue: options });
  }

  /**
   * The module with options made by a factory from injected providers, such as the secret from `ConfigService`.
   *
   * @example
   * PayhookModule.forRootAsync({
   *   imports: [ConfigModule],
   *   inject: [ConfigService],
   *   useFactory: (config: ConfigService) => ({ secret: config.getOrThrow<string>('WEBHOOK_SECRET') }),
   * })
   */
  static forRootAsync(options: PayhookModuleAsyncOptions): DynamicModule {
    const provider: Provider = {
      provide: PAYHOOK_OPTIONS,
      useFactory: options.useFactory,
      inject: options.inject ?? [],
    };
    return PayhookModule.with(provider, options.imports);
  }

  private static with(options: Provider, imports: DynamicModule['imports'] = []): DynamicModule {
    return {
      module: PayhookModule,
      imports: [DiscoveryModule, ...imports],
      providers: [options, PayhookWebhooks],
      exports: [PayhookWebhooks],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    if (this.options.forwardErrors) consumer.apply(throwRefusal).forRoutes('*');
  }
}
