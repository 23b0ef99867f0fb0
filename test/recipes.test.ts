import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { FORM_HEADERS, formBody, purchase } from '../packages/core/test/fixtures.ts';
import { workersRecipe } from '../scripts/runtimes.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const DOCS = [
  'docs/recipes.md',
  'packages/core/README.md',
  'packages/payments/README.md',
  'packages/nestjs/README.md',
];

// The two application functions every recipe calls; declared here so the doc reads as the user's own code.
const PRELUDE = `declare global {
  function fulfil(orderId: string): Promise<void>;
  function recordRefund(operationId: string, amount: number): Promise<void>;
}
`;

interface Block {
  doc: string;
  line: number;
  code: string;
}

/** The ```ts blocks of a Markdown file, with the line each starts on. */
function tsBlocks(doc: string, markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```ts') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end]!.trim() !== '```') end++;
    blocks.push({ doc, line: start + 1, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Type-checks each block as its own module with the repository's compiler options (sources via `paths`). */
function typecheck(blocks: Block[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const files = new Map<string, string>();
  for (const [index, block] of blocks.entries()) {
    files.set(join(ROOT, 'docs', `doc-block-${index + 1}.ts`), block.code);
  }
  files.set(join(ROOT, 'docs', 'doc-prelude.ts'), `${PRELUDE}export {};\n`);
  const options = { ...config.options, noEmit: true };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
  host.readFile = (name) => files.get(name) ?? readFile.call(host, name);
  host.getSourceFile = (name, language, ...rest) => {
    const text = files.get(name);
    return text === undefined
      ? getSourceFile.call(host, name, language, ...rest)
      : ts.createSourceFile(name, text, language, true);
  };
  const program = ts.createProgram([...files.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    const index = /doc-block-(\d+)\.ts$/.exec(diagnostic.file.fileName)?.[1];
    const block = index === undefined ? undefined : blocks[Number(index) - 1];
    const where = block ? `${block.doc}:${block.line + line}` : `${diagnostic.file.fileName}:${line + 1}`;
    return `${where}: ${message}`;
  });
}

describe('code in docs/recipes.md and the core, payments and nestjs READMEs', () => {
  const markdown = readFileSync(join(ROOT, 'docs', 'recipes.md'), 'utf8');
  const blocks = DOCS.flatMap((doc) => tsBlocks(doc, readFileSync(join(ROOT, doc), 'utf8')));

  it('has a recipe for every framework and runtime the issue names', () => {
    const headings = markdown.split('\n').filter((line) => line.startsWith('## '));
    expect(headings).toEqual([
      '## Express',
      '## Koa',
      '## node:http',
      '## Next.js route handler',
      '## Hono',
      '## Fastify',
      '## AWS Lambda',
      '## Cloudflare Workers',
      '## A queue worker, without the handler',
      '## The whole loop: create, redirect, webhook, the watch',
      '## Fulfilment and refunds on transitions: the payment ledger',
      '## Orders whose webhook never came',
      '## What did the service send?',
      '## Unit tests with @payhook/testing',
    ]);
    expect(blocks.filter((block) => block.doc === 'docs/recipes.md').length).toBeGreaterThanOrEqual(
      headings.length,
    );
  });

  it('type-checks every ts block of them against the packages', () => {
    expect(typecheck(blocks)).toEqual([]);
  }, 120_000);

  it('reports a block that does not type-check, with its line in the doc', () => {
    const broken = [
      {
        doc: 'docs/recipes.md',
        line: 10,
        code: "import { createWebhookHandler } from '@payhook/core';\ncreateWebhookHandler({ secret: 1 });",
      },
    ];
    const errors = typecheck(broken);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^docs\/recipes\.md:11: Type 'number' is not assignable/);
  }, 120_000);
});

describe('the Cloudflare Workers recipe', () => {
  const recipe = workersRecipe(readFileSync(join(ROOT, 'docs', 'recipes.md'), 'utf8'));
  const work = mkdtempSync(join(tmpdir(), 'payhook-worker-recipe-'));

  afterEach(() => vi.unstubAllGlobals());
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('needs no nodejs_compat, as its text says (pnpm runtimes runs it in workerd without, then with the flag)', () => {
    expect(recipe.compatibilityFlags).toEqual([]);
    expect(recipe.compatibilityDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('answers a signed delivery with handled, its redelivery with duplicate, and other paths with 404', async () => {
    const fulfilled: string[] = [];
    vi.stubGlobal('fulfil', async (orderId: string) => {
      fulfilled.push(orderId);
    });
    vi.stubGlobal('recordRefund', async () => {});
    const file = join(work, 'worker.ts');
    writeFileSync(file, recipe.worker);
    const worker = (await import(file)).default as {
      fetch(request: Request, env: { WEBHOOK_SECRET: string }): Promise<Response>;
    };
    const env = { WEBHOOK_SECRET: 'worker-secret' };
    const deliver = (path: string) =>
      worker.fetch(
        new Request(`https://shop.example${path}`, {
          method: 'POST',
          headers: FORM_HEADERS,
          body: formBody(purchase({ order_id: 'w-1' }), env.WEBHOOK_SECRET),
        }),
        env,
      );
    const answers = [];
    for (const path of ['/webhooks', '/webhooks', '/other']) {
      const response = await deliver(path);
      answers.push(`${response.status} ${await response.text()}`);
    }
    expect(answers).toEqual([
      '200 {"ok":true,"outcome":"handled"}',
      '200 {"ok":true,"outcome":"duplicate"}',
      '404 Not found',
    ]);
    expect(fulfilled).toEqual(['w-1']);
  });
});
