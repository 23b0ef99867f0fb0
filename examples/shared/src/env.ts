/** What an example reads from its environment. */
export interface ExampleEnv {
  port: number;
  host: string;
  secret: string;
}

/**
 * Reads PORT (default 3000; 0 picks a free port), HOST (default 127.0.0.1) and WEBHOOK_SECRET (required: there is
 * no default secret, so an example can never run in production with a known one).
 *
 * @example
 * const { port, host, secret } = readExampleEnv(process.env);
 */
export function readExampleEnv(env: NodeJS.ProcessEnv): ExampleEnv {
  const secret = env.WEBHOOK_SECRET;
  if (secret === undefined || secret === '') {
    throw new Error(
      'WEBHOOK_SECRET is not set: export your project secret (SECRET_KEY in the settings), e.g. WEBHOOK_SECRET=... npm start',
    );
  }
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be a port number (0 to 65535), not ${JSON.stringify(env.PORT)}`);
  }
  return { port, host: env.HOST || '127.0.0.1', secret };
}
