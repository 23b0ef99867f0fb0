import type { Server } from 'node:http';
import type { INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import nestCore from '@nestjs/core/package.json' with { type: 'json' };
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';

/**
 * The Nest major under test: 12 from this package's devDependencies, or 11 where the vitest project 'nestjs 11'
 * points `@nestjs/*` at test/nest11's.
 */
export const NEST = `NestJS ${nestCore.version.split('.')[0]}`;

export type Platform = 'express' | 'fastify';
export const PLATFORMS: Platform[] = ['express', 'fastify'];

/**
 * A Nest app of `module` on the platform, initialized with Nest's defaults (its json and urlencoded body parsers
 * on, no `rawBody`), its logger off; the server, not listening, for supertest.
 */
export async function nestServer(
  platform: Platform,
  module: Type,
  app?: (app: INestApplication) => void,
): Promise<Server> {
  const nest = await NestFactory.create(
    module,
    platform === 'express' ? new ExpressAdapter() : new FastifyAdapter(),
    { logger: false, abortOnError: false },
  );
  app?.(nest);
  await nest.init();
  if (platform === 'fastify') await nest.getHttpAdapter().getInstance().ready();
  return nest.getHttpServer() as Server;
}
