import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, HttpAdapterHost, MetadataScanner } from '@nestjs/core';
import type { Notification, WebhookHandler } from '@payhook/core';
import { ANY, routesOf } from './decorators.js';
import { nestMiddleware } from './mount.js';
import { type NestWebhookContext, PAYHOOK_OPTIONS, type PayhookModuleOptions } from './options.js';

/**
 * The module's webhook: mounted on the HTTP adapter as soon as Nest has one (before `app.init()` registers the
 * body parsers, so `rawBody` need not be on), and routed at bootstrap to every `@OnNotification` method of the
 * app's providers and controllers.
 *
 * @example
 * const { webhook } = app.get(PayhookWebhooks); // core's handler, for `webhook.fetch` or tests
 */
@Injectable()
export class PayhookWebhooks implements OnModuleInit {
  /** Core's handler underneath, with the decorated methods' routes. */
  readonly webhook: WebhookHandler<NestWebhookContext>;

  constructor(
    @Inject(PAYHOOK_OPTIONS) options: PayhookModuleOptions,
    @Inject(HttpAdapterHost) adapterHost: HttpAdapterHost,
    @Inject(DiscoveryService) private readonly discovery: DiscoveryService,
    @Inject(MetadataScanner) private readonly scanner: MetadataScanner,
  ) {
    const middleware = nestMiddleware(options);
    this.webhook = middleware.webhook;
    // Set when NestFactory.create builds the instances, or later by Test.createTestingModule's createNestApplication:
    // either way before app.init() adds the body parsers.
    adapterHost.init$.subscribe(() => adapterHost.httpAdapter.use(middleware));
  }

  onModuleInit(): void {
    // An instance reached through several tokens (useExisting, an exported provider) is routed once.
    const routed = new Set<object>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const { instance } = wrapper;
      if (!instance || typeof instance !== 'object' || routed.has(instance)) continue;
      routed.add(instance);
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = (instance as Record<string, unknown>)[name];
        const routes = routesOf(method);
        if (routes.length === 0) continue;
        if (!wrapper.isDependencyTreeStatic()) {
          throw new TypeError(
            `[@payhook/nestjs] ${wrapper.name as string}.${name} handles notifications but its provider is request-scoped: a notification has no Nest request scope; make the provider a singleton (the default scope).`,
          );
        }
        const handler = (method as (...args: unknown[]) => unknown).bind(instance) as (
          notification: Notification,
          req: NestWebhookContext,
          delivery: never,
        ) => unknown;
        for (const { event, options } of routes) {
          if (event === ANY) this.webhook.onAny(handler as never, options);
          else this.webhook.on(event as never, handler as never, options);
        }
      }
    }
  }
}
