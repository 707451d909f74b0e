/**
 * What the catalog commands share: the folder and config options (worded the same in every
 * `--help`), one way to refuse with a problem, and one way problems reach stderr (exit 2).
 */
import type { Command } from 'commander';
import { CatalogError, formatProblem, type CatalogProblem } from '../catalog/catalog-error.js';
import type { DiagnosticError } from '../diagnostics/diagnostic-error.js';
import { EXIT_BAD_INPUT } from './exit-codes.js';

/** Folder/config flags a command accepts; each overrides evgen.config.json. */
export interface FolderOptionSet {
  readonly out?: string;
  readonly handlers?: string;
}

/**
 * Adds `--events` and `--config`, plus `--out` / `--handlers` when described. `out` and
 * `handlers` are the help texts' leading words (what the folder is for this command).
 */
export function addFolderOptions(command: Command, describe: FolderOptionSet = {}): Command {
  command.option(
    '--events <dir>',
    'events folder (default: "events", or "events" in evgen.config.json)',
  );
  if (describe.handlers !== undefined) {
    command.option(
      '--handlers <dir>',
      `${describe.handlers} (default: "handlers", or "handlers" in evgen.config.json)`,
    );
  }
  if (describe.out !== undefined)
    command.option(
      '--out <dir>',
      `${describe.out} (default: "generated", or "out" in evgen.config.json)`,
    );
  return command.option(
    '--config <file>',
    'config file (default: ./evgen.config.json when it exists)',
  );
}

/** A refusal with one problem: `file#pointer: message` and a hint saying what to do. */
export function refuse(
  problem: Omit<CatalogProblem, 'pointer'> & { readonly pointer?: string },
): CatalogError {
  return new CatalogError([{ pointer: '', ...problem }]);
}

/** Prints every problem of a CatalogError (or any DiagnosticError) to stderr, in the one format all commands use. */
export function printProblems(error: DiagnosticError): void {
  for (const problem of error.problems) process.stderr.write(`${formatProblem(problem)}\n`);
}

/** Runs a command body; a CatalogError becomes its problems on stderr and exit code 2. */
export async function reportingProblems(body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (!(error instanceof CatalogError)) throw error;
    printProblems(error);
    return EXIT_BAD_INPUT;
  }
}
