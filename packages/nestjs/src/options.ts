import type { IncomingMessage } from 'node:http';
import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from '@nestjs/common';
import type { MiddlewareOptions } from '@payhook/core/adapter';

/**
 * What a handler receives as its second argument: the Node request, which on the Express platform is Express's
 * `Request` and on the Fastify platform the raw request Fastify wraps.
 */
export type NestWebhookContext = IncomingMessage;

/**
 * Core's handler options (see @payhook/core) and `path`, the one path whose requests are webhooks, outside any
 * global prefix (default `/webhooks`). `forwardErrors` hands each refusal, core's `WebhookError`, to Nest's
 * exception filters instead of answering it.
 *
 * @example
 * const options: PayhookModuleOptions = { secret: process.env.WEBHOOK_SECRET!, path: '/webhooks' };
 */
export type PayhookModuleOptions = MiddlewareOptions<NestWebhookContext>;

/**
 * `PayhookModule.forRootAsync`'s options: the options are made by `useFactory` from what `inject` names, such as
 * `ConfigService`, out of the modules in `imports`.
 *
 * @example
 * const options: PayhookModuleAsyncOptions = {
 *   imports: [ConfigModule],
 *   inject: [ConfigService],
 *   useFactory: (config: ConfigService) => ({ secret: config.getOrThrow('WEBHOOK_SECRET') }),
 * };
 */
export interface PayhookModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  // biome-ignore lint/suspicious/noExplicitAny: the factory's arguments are whatever `inject` names.
  useFactory: (...args: any[]) => PayhookModuleOptions | Promise<PayhookModuleOptions>;
  inject?: (InjectionToken | OptionalFactoryDependency)[];
}

/** The injection token of the module's options. */
export const PAYHOOK_OPTIONS: unique symbol = Symbol.for('@payhook/nestjs:options');

/** The path served when the options give none. */
export const DEFAULT_PATH = '/webhooks';
