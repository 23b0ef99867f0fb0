import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { close, listen, postExpectingContinue } from '../../../../test/support/expect-continue.ts';
import { formBody, purchase, SECRET } from '../../test/fixtures.js';
import { createWebhookHandler } from '../handler.js';
import { deferContinue } from './continue.js';
import { createNodeListener } from './middleware.js';

const FORM = 'application/x-www-form-urlencoded';
const LIMIT = 4096;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

/** A node:http server over core's listener, through `deferContinue` or not. */
async function serve(deferring: boolean, handled: unknown[] = []): Promise<Server> {
  const webhook = createWebhookHandler<IncomingMessage>({
    secret: SECRET,
    maxBodyBytes: LIMIT,
    logger: false,
    handle: (notification) => void handled.push(notification),
  });
  const server = createServer(createNodeListener(webhook));
  if (deferring) deferContinue(server);
  servers.push(server);
  return listen(server);
}

function statusLine(received: string): string {
  return received.slice(0, received.indexOf('\r\n'));
}

describe('deferContinue', () => {
  it('answers 413 payload.too_large to a declared length over maxBodyBytes, never 100 Continue', async () => {
    const server = await serve(true);
    const { received, continued } = await postExpectingContinue(server, '/', FORM, '', LIMIT + 1);
    expect(continued).toBe(false);
    expect(statusLine(received)).toBe('HTTP/1.1 413 Payload Too Large');
    expect(received).not.toContain('100 Continue');
    expect(received).toMatch(/\r\nconnection: close\r\n/i);
    expect(received).toContain('"code":"payload.too_large"');
  });

  it('answers 415 to a type payhook does not read, never 100 Continue', async () => {
    const server = await serve(true);
    const { received, continued } = await postExpectingContinue(server, '/', 'text/plain', 'hello');
    expect(continued).toBe(false);
    expect(statusLine(received)).toBe('HTTP/1.1 415 Unsupported Media Type');
  });

  it('sends 100 Continue once the body is read, and handles the delivery that follows', async () => {
    const handled: unknown[] = [];
    const server = await serve(true, handled);
    const { received, continued } = await postExpectingContinue(server, '/', FORM, formBody(purchase()));
    expect(continued).toBe(true);
    const final = received.slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
    expect(statusLine(final)).toBe('HTTP/1.1 200 OK');
    expect(final.endsWith('{"ok":true,"outcome":"handled"}')).toBe(true);
    expect(handled).toHaveLength(1);
  });

  it('sends 100 Continue to a body read by async iteration', async () => {
    const server = deferContinue(
      createServer(async (request, response) => {
        let size = 0;
        for await (const chunk of request) size += (chunk as Buffer).length;
        response.end(String(size));
      }),
    );
    servers.push(await listen(server));
    const { received, continued } = await postExpectingContinue(server, '/', 'text/plain', 'twelve bytes');
    expect(continued).toBe(true);
    expect(received.endsWith('\r\n\r\n12')).toBe(true);
  });

  it('hands each request to the listener once when called twice on one server', async () => {
    let calls = 0;
    const server = createServer((request, response) => {
      calls++;
      request.resume();
      request.on('end', () => response.end('done'));
    });
    servers.push(await listen(deferContinue(deferContinue(server))));
    const { received, continued } = await postExpectingContinue(server, '/', 'text/plain', 'body');
    expect([continued, received.endsWith('\r\n\r\ndone'), calls]).toEqual([true, true, 1]);
  });

  it('is needed: without it Node sends 100 Continue before the 413', async () => {
    const server = await serve(false);
    const { received, continued } = await postExpectingContinue(server, '/', FORM, 'x'.repeat(LIMIT + 1));
    expect(continued).toBe(true);
    expect(received).toContain('HTTP/1.1 413 Payload Too Large');
  });
});
