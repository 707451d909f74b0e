#!/usr/bin/env node
/**
 * The evgen command line. Each command lives in its own file under `commands/` and registers
 * itself; this file only wires them up and maps failures to exit codes:
 * 0 success, 1 violations or stale output, 2 bad input or usage.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { commands, type CommandEntry } from './commands/index.js';

import { EXIT_BAD_INPUT, EXIT_OK } from './exit-codes.js';
import { printable } from '../diagnostics/printable.js';
import { redactText } from './redact-secrets.js';

export { EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK } from './exit-codes.js';

/**
 * The program with the commands `argv` needs: only the named command when it is a known one,
 * none for a bare `--version`, every command otherwise (help, usage errors list them all).
 */
export async function createProgram(argv: readonly string[] = []): Promise<Command> {
  const { Command } = await import('commander');
  const program = new Command('evgen')
    .description(
      'Versioned JSON Schema events → typed TypeScript envelopes, validators, outbox, inbox and transports',
    )
    .version(toolVersion(), '-V, --version', 'print the evgen version')
    .showHelpAfterError()
    .exitOverride();
  for (const entry of commandsFor(argv)) (await entry.load())(program);
  return program;
}

function commandsFor(argv: readonly string[]): readonly CommandEntry[] {
  const name = argv.find((arg) => !arg.startsWith('-'));
  const named = commands.find((entry) => entry.name === name);
  if (named !== undefined) return [named];
  if (name === undefined && argv.some((arg) => arg === '--version' || arg === '-V')) return [];
  return commands;
}

/** The package version; package.json sits two folders up from both src/cli and dist/cli. */
function toolVersion(): string {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

/** An error as one printable line: its message and its causes' (`: `-joined), passwords redacted. */
function unexpected(error: unknown): string {
  const parts: string[] = [];
  for (let cause = error, depth = 0; cause !== undefined && depth < 5; depth++) {
    parts.push(
      cause instanceof Error ? cause.message || cause.name : (JSON.stringify(cause) ?? ''),
    );
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return printable(redactText(parts.join(': ')));
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  // `evgen --version` alone is answered before commander is loaded, with what commander prints.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    process.stdout.write(`${toolVersion()}\n`);
    return EXIT_OK;
  }
  const program = await createProgram(argv);
  const { CommanderError } = await import('commander');
  // Commands report through process.exitCode; start clean so one in-process run (tests) cannot
  // leak its code into the next, and leave the caller's value as it was.
  const previous = process.exitCode;
  process.exitCode = undefined;
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with exit code 0; any other parse failure is a usage error.
      return error.exitCode === 0 ? EXIT_OK : EXIT_BAD_INPUT;
    }
    // Anything a command did not turn into a problem (a driver's or a library's error): one line,
    // secrets and control characters removed; the stack only when asked for.
    process.stderr.write(`evgen: ${unexpected(error)}\n`);
    if (process.env.EVGEN_DEBUG === '1' && error instanceof Error && error.stack !== undefined)
      process.stderr.write(`${error.stack}\n`);
    return EXIT_BAD_INPUT;
  } finally {
    process.exitCode = previous;
  }
}

// Run only when executed as the `evgen` binary (through npm's bin link), not when imported by tests.
const entry = process.argv[1];
if (entry !== undefined && realpathSync(entry) === fileURLToPath(import.meta.url)) {
  // A reader that stops early (`evgen check | head`) closes the pipe: a normal end, not a crash.
  process.stdout.on('error', endOnClosedPipe);
  process.stderr.on('error', endOnClosedPipe);
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exitCode = EXIT_BAD_INPUT;
    },
  );
}

/** EPIPE on stdout/stderr ends the output quietly; any other stream error is still thrown. */
function endOnClosedPipe(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE') throw error;
}
