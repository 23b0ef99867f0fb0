import { describe, expect, it } from 'vitest';
import { RequestError } from '../errors.js';
import { fromParserError } from './parser-error.js';

function parserError(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

describe('fromParserError', () => {
  it.each([
    ['entity.too.large', 413, 'payload.too_large', 413],
    ['parameters.too.many', 413, 'payload.too_large', 413],
    ['entity.parse.failed', 400, 'payload.malformed', 400],
    ['request.aborted', 400, 'payload.malformed', 400],
    ['request.size.invalid', 400, 'payload.malformed', 400],
    ['charset.unsupported', 415, 'media_type.unsupported', 415],
    ['encoding.unsupported', 415, 'media_type.unsupported', 415],
  ])('turns a body-parser %s (%i) into %s (%i)', (type, parserStatus, code, status) => {
    const error = fromParserError(
      parserError('refused', { type, status: parserStatus, body: 'data=secret' }),
    );
    expect(error).toBeInstanceOf(RequestError);
    expect([error?.code, error?.status, error?.cause]).toEqual([
      code,
      status,
      { type, status: parserStatus },
    ]);
    expect(error?.message).toBe(
      `[@payhook/core] a body parser mounted before payhook refused the body (${type}); mount payhook first, or give that parser payhook's limits.`,
    );
  });

  it("turns co-body's bare SyntaxError for a body that is not JSON into payload.malformed", () => {
    const cause = Object.assign(new SyntaxError('Unexpected end of JSON input'), {
      status: 400,
      body: '{"a":',
    });
    const error = fromParserError(cause);
    expect(error?.code).toBe('payload.malformed');
    // The parser's error carries the raw body; a logger printing the cause must not print it.
    expect(JSON.stringify(error?.cause)).not.toContain('{"a":');
  });

  it.each([
    ['an application error', new Error('boom')],
    ['an error of another type', parserError('x', { type: 'stream.not.readable', status: 500 })],
    ['a SyntaxError that is not a parser rejection', new SyntaxError('bad')],
    ['a string', 'entity.too.large'],
    ['null', null],
  ])('leaves %s alone', (_, error) => {
    expect(fromParserError(error)).toBeUndefined();
  });
});
