import { describe, expect, expectTypeOf, it } from 'vitest';
import { UsageError } from './args.js';
import { defineCommand } from './command.js';
import { memoryIO } from './io.js';
import { runCli } from './run.js';

const HELP = 'Usage: payhook greet [--name N] [--tag T …] [--loud] [WORDS…]';

/** A command that prints what it got: the skeleton's own behaviour, apart from any real command. */
function greet(definition: { positionals?: boolean; helpOnUsageError?: boolean; longLived?: boolean } = {}) {
  const runs: { values: unknown; positionals: string[]; aborted: boolean }[] = [];
  const command = defineCommand({
    help: HELP,
    options: { text: 'name', list: 'tag', flag: 'loud' },
    ...definition,
    run: async ({ values, positionals }, io, signal) => {
      runs.push({ values, positionals, aborted: signal.aborted });
      if (values.name === '') throw new UsageError('--name is empty.');
      if (values.name === 'crash') throw new Error('the greeting failed');
      io.stdout(`hello ${values.name ?? 'you'}${values.loud ? '!' : ''}`);
      return values.name === 'nobody' ? 1 : 0;
    },
  });
  return { command, runs };
}

describe('defineCommand: the skeleton every payhook command shares', () => {
  it('parses the options and runs the command with them, resolving its exit code', async () => {
    const { command, runs } = greet();
    const { io, out, err } = memoryIO();
    expect(await command(['--name', 'Ada', '--loud', '--tag', 'a', '--tag', 'b'], io)).toBe(0);
    expect(out).toEqual(['hello Ada!']);
    expect(err).toEqual([]);
    expect(runs).toEqual([
      { values: { name: 'Ada', loud: true, tag: ['a', 'b'] }, positionals: [], aborted: false },
    ]);
    expect(await command(['--name', 'nobody'], memoryIO().io)).toBe(1);
  });

  it.each([['--help'], ['-h']])(
    'prints the help on %s to standard output and exits 0 without running',
    async (flag) => {
      const { command, runs } = greet();
      const { io, out, err } = memoryIO();
      expect(await command(['--name', 'Ada', flag], io)).toBe(0);
      expect([out, err, runs]).toEqual([[HELP], [], []]);
    },
  );

  it('exits 2 on an unknown option, naming it with the closest one and the help hint', async () => {
    const { command, runs } = greet();
    const { io, out, err } = memoryIO();
    expect(await command(['--nmae', 'Ada'], io)).toBe(2);
    expect(err).toEqual([
      'payhook greet: unknown option --nmae. Did you mean "--name"?',
      "Run 'payhook greet --help' for usage.",
    ]);
    expect([out, runs]).toEqual([[], []]);
  });

  it('types the values by kind: text a string, list an array, flag a boolean, each absent when not given', () => {
    defineCommand({
      help: HELP,
      options: { text: 'base-url name', list: 'tag', flag: 'loud' },
      run: async ({ values }) => {
        expectTypeOf(values).toEqualTypeOf<
          { 'base-url'?: string; name?: string } & { tag?: string[] } & { loud?: boolean }
        >();
        return 0;
      },
    });
  });

  it("takes its name from the help's usage line, and refuses a help without one", () => {
    const run = async () => 0;
    expect(() => defineCommand({ help: 'Prints a greeting.', options: {}, run })).toThrow(
      new TypeError("a command's help starts with 'Usage: payhook <name>'."),
    );
  });

  it('exits 2 on an option without its value', async () => {
    const { io, err } = memoryIO();
    expect(await greet().command(['--name'], io)).toBe(2);
    expect(err[0]).toMatch(/^payhook greet: Option '--name <value>' argument missing/);
  });

  it('refuses a positional argument unless the command takes them', async () => {
    const refusing = memoryIO();
    expect(await greet().command(['world'], refusing.io)).toBe(2);
    expect(refusing.err[0]).toBe('payhook greet: unexpected argument "world".');
    const { command, runs } = greet({ positionals: true });
    expect(await command(['big', 'world'], memoryIO().io)).toBe(0);
    expect(runs[0]?.positionals).toEqual(['big', 'world']);
  });

  it('exits 2 on a UsageError the command throws, with the hint, or the whole help with helpOnUsageError', async () => {
    const hinted = memoryIO();
    expect(await greet().command(['--name', ''], hinted.io)).toBe(2);
    expect(hinted.err).toEqual(['payhook greet: --name is empty.', "Run 'payhook greet --help' for usage."]);
    const helped = memoryIO();
    expect(await greet({ helpOnUsageError: true }).command(['--name', ''], helped.io)).toBe(2);
    expect(helped.err).toEqual(['payhook greet: --name is empty.', HELP]);
  });

  it('leaves any other error to runCli (printed, exit 1)', async () => {
    await expect(greet().command(['--name', 'crash'], memoryIO().io)).rejects.toThrow('the greeting failed');
  });

  it('passes the signal given to the run, as a long-lived command gets it', async () => {
    const { command, runs } = greet({ longLived: true });
    expect(await command([], memoryIO().io, AbortSignal.abort())).toBe(0);
    expect(runs[0]?.aborted).toBe(true);
  });
});

describe('every payhook command', () => {
  const NAMES = [
    'sign',
    'send',
    'resend',
    'reconcile',
    'operation',
    'verify',
    'replay',
    'inspect',
    'drift',
    'serve',
    'scenario',
    'queue',
    'relay',
  ];

  it('is each command the top-level help lists, so a new one is held to the skeleton too', async () => {
    const top = memoryIO();
    expect(await runCli(['--help'], top.io)).toBe(0);
    const listed = top.out
      .join('\n')
      .split('\n')
      .flatMap((line) => /^ {2}([a-z]+) /.exec(line)?.[1] ?? []);
    expect(listed).toEqual(NAMES);
  });

  it.each(NAMES)('%s: its help names it, as its error lines do', async (name) => {
    const help = memoryIO();
    expect(await runCli([name, '--help'], help.io)).toBe(0);
    expect(help.out[0]).toMatch(new RegExp(`^Usage: payhook ${name}( |$)`));
    const refused = memoryIO();
    expect(await runCli([name, '--no-such-option'], refused.io)).toBe(2);
    expect(refused.err[0]).toMatch(new RegExp(`^payhook ${name}: unknown option --no-such-option\\.`));
  });
});
