import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

// The package's own types are built against Fastify 5's; a Fastify 4 app must take them as they are.
const CONSUMER = `import Fastify, { type FastifyRequest } from 'fastify';
import { webhookPlugin, type FastifyWebhookPlugin } from '@payhook/fastify';

const plugin: FastifyWebhookPlugin = webhookPlugin({ secret: 's', path: '/webhooks', forwardErrors: true })
  .on('purchase.success', (payment, request) => void [payment.order_id, request?.url])
  .onAny((_notification, request: FastifyRequest | undefined) => void request?.routeOptions.url);
const app = Fastify();
app.register(plugin, { prefix: '/api' });
`;

/** Type errors of the consumer, and of the plugin's source, with `fastify` resolving to `to`. */
function typeErrors(to: string): string[] {
  const consumer = path('./fastify4-consumer.ts');
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    types: ['node'],
    baseUrl: path('.'),
    paths: {
      fastify: [to],
      '@payhook/fastify': [path('../src/index.ts')],
      '@payhook/core': [path('../../core/src/index.ts')],
    },
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists } = host;
  host.fileExists = (name) => name === consumer || fileExists.call(host, name);
  host.getSourceFile = (name, language, ...rest) =>
    name === consumer
      ? ts.createSourceFile(name, CONSUMER, language, true)
      : getSourceFile.call(host, name, language, ...rest);
  const program = ts.createProgram([consumer], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('types of @payhook/fastify in a Fastify 4 app', () => {
  it("type-check against Fastify 4's own types, as against Fastify 5's", () => {
    expect(typeErrors(path('../node_modules/fastify4/fastify.d.ts'))).toEqual([]);
    expect(typeErrors(path('../node_modules/fastify/fastify.d.ts'))).toEqual([]);
  }, 120_000);
});
