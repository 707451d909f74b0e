/**
 * `evgen diff OLD NEW [--mode M] [--policy P] [--format text|json]`: compares two schema files.
 * Lists every difference from OLD to NEW (Confluent difference names) and whether NEW may follow
 * OLD under the mode (default FULL) and policy (default evgen).
 * Exit 0 compatible, 1 incompatible, 2 bad input (unreadable file, invalid JSON, bad $ref, or
 * schemas too complex to compare within the engine's budget: a located too-complex problem).
 */
import { readFile } from 'node:fs/promises';
import { parse, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { bundleSchema } from '../../catalog/bundle-schema.js';
import { CatalogError, formatProblem } from '../../catalog/catalog-error.js';
import { ProblemList } from '../../catalog/problem-list.js';
import { declaredDialect, SchemaCheckers } from '../../catalog/schema-dialect.js';
import { SchemaFiles } from '../../catalog/schema-files.js';
import {
  COMPATIBILITY_MODES,
  COMPATIBILITY_POLICIES,
  type CompatibilityMode,
  type CompatibilityPolicy,
  type JsonSchema,
} from '../../catalog/model.js';
import {
  checkReadable,
  diffSchemas,
  type SchemaChange,
  type SchemaDiffResult,
} from '../../compat/diff-schemas.js';
import { ComparisonLimitError } from '../../compat/comparison-problem.js';
import { MODES, type Direction } from '../../compat/modes.js';
import type { Diagnostic } from '../../diagnostics/diagnostic.js';
import { formatDiagnosticText } from '../../diagnostics/format.js';
import { explain } from '../../compat/rules/hints.js';
import { SchemaInputError } from '../../compat/schema-document.js';
import { UNJUDGED_HINT, UnjudgedChangeError } from '../../compat/unjudged-change.js';
import { printable, printableJson } from '../../diagnostics/printable.js';
import { EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';

export interface DiffOptions {
  readonly mode?: CompatibilityMode;
  readonly policy?: CompatibilityPolicy;
  readonly format?: 'text' | 'json';
}

export function registerDiff(program: Command): void {
  program
    .command('diff')
    .description('compare two JSON Schema files: differences and compatibility verdict')
    .argument('<old>', 'schema file data was written with')
    .argument('<new>', 'the changed schema')
    .addOption(
      new Option('--mode <mode>', 'compatibility mode')
        .choices([...COMPATIBILITY_MODES])
        .default('FULL'),
    )
    .addOption(
      new Option('--policy <policy>', 'compatibility policy')
        .choices([...COMPATIBILITY_POLICIES])
        .default('evgen'),
    )
    .addOption(
      new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'),
    )
    .action(async (oldFile: string, newFile: string, options: DiffOptions) => {
      process.exitCode = await runDiff(oldFile, newFile, options);
    });
}

async function readSchema(file: string): Promise<JsonSchema> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new SchemaInputError(
      `cannot read ${printable(file)}: ${printable((error as NodeJS.ErrnoException).code ?? String(error))}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SchemaInputError(
      `${printable(file)} is not valid JSON: ${printable((error as Error).message)}`,
    );
  }
  if (
    typeof value !== 'boolean' &&
    (typeof value !== 'object' || value === null || Array.isArray(value))
  ) {
    throw new SchemaInputError(
      `${printable(file)} is not a JSON Schema (expected an object or a boolean)`,
    );
  }
  return bundle(resolve(file), value);
}

/** Inlines `$ref`s to other files with the catalog's bundler, so both sides are self-contained. */
async function bundle(absolutePath: string, value: unknown): Promise<JsonSchema> {
  if (typeof value === 'boolean') return value;
  const problems = new ProblemList();
  const files = new SchemaFiles(problems, new SchemaCheckers());
  const loaded = await files.load(absolutePath);
  const dialect = declaredDialect(value);
  const bundled =
    loaded === undefined || dialect === 'unsupported'
      ? undefined
      : await bundleSchema(loaded, dialect ?? 'draft-07', {
          catalogRoot: parse(absolutePath).root,
          files,
          problems,
        });
  try {
    problems.throwIfAny();
  } catch (error) {
    if (error instanceof CatalogError)
      throw new SchemaInputError(error.problems.map(formatProblem).join('\n'));
    throw error;
  }
  if (bundled === undefined)
    throw new SchemaInputError(`${printable(absolutePath)}: unsupported or invalid schema`);
  return bundled;
}

/** A comparison limit placed in the file whose schema the engine was walking. */
class LocatedLimit extends Error {
  constructor(readonly diagnostic: Diagnostic) {
    super(diagnostic.message);
  }
}

/** Runs one comparison; a limit it meets is located in `updateFile` (the engine's paths are the update's). */
function locating<T>(updateFile: string, compare: () => T): T {
  try {
    return compare();
  } catch (error) {
    if (!(error instanceof ComparisonLimitError)) throw error;
    const rest = error.path.replace(/^#\/?/, '');
    throw new LocatedLimit({
      file: updateFile,
      pointer: rest === '' ? '' : `/${rest}`,
      code: 'too-complex',
      message: error.message.replace(/ at #.*$/, ''),
      hint: 'simplify the schema (fewer alternatives in anyOf/oneOf, shorter $ref chains)',
    });
  }
}

const line = (change: SchemaChange) => `${change.type} ${change.path}`;

export async function runDiff(
  oldFile: string,
  newFile: string,
  options: DiffOptions,
): Promise<number> {
  const mode = options.mode ?? 'FULL';
  const policy = options.policy ?? 'evgen';
  let results: Record<Direction, SchemaDiffResult>;
  let changes: readonly SchemaChange[];
  try {
    const [before, after] = await Promise.all([readSchema(oldFile), readSchema(newFile)]);
    // The differences as written; the verdicts as the policy sees the pair.
    changes = locating(newFile, () => diffSchemas(before, after).changes);
    results = {
      backward: locating(newFile, () => checkReadable(before, after, policy)),
      forward: locating(oldFile, () => checkReadable(after, before, policy)),
    };
  } catch (error) {
    if (error instanceof SchemaInputError) {
      // Its parts (file names, parser messages) were made printable where it was thrown.
      process.stderr.write(`evgen diff: ${error.message}\n`);
      return EXIT_BAD_INPUT;
    }
    if (error instanceof UnjudgedChangeError) {
      process.stderr.write(
        `evgen diff: ${printable(error.message)} (policy ${policy})\n  hint: ${UNJUDGED_HINT}\n`,
      );
      return EXIT_BAD_INPUT;
    }
    if (error instanceof LocatedLimit) {
      // The engine's budget ran out: bad input like any other, located where it stopped.
      process.stderr.write(`${formatDiagnosticText(error.diagnostic)}\n`);
      return EXIT_BAD_INPUT;
    }
    throw error;
  }
  const checked = MODES[mode].directions;
  const compatible = checked.every((direction) => results[direction].compatible);

  if (options.format === 'json') {
    const direction = (name: Direction) => ({
      checked: checked.includes(name),
      compatible: results[name].compatible,
      incompatibleChanges: results[name].incompatibleChanges.map((change) => ({
        type: change.type,
        path: change.path,
      })),
    });
    const body = {
      compatible,
      mode,
      policy,
      changes: changes.map((change) => ({ type: change.type, path: change.path })),
      backward: direction('backward'),
      forward: direction('forward'),
    };
    process.stdout.write(`${printableJson(body)}\n`);
  } else {
    const lines = [`changes ${oldFile} → ${newFile}:`];
    if (changes.length === 0) lines.push('  (none)');
    for (const change of changes) lines.push(`  ${line(change)}`);
    for (const name of checked) {
      const result = results[name];
      const label =
        name === 'backward'
          ? 'backward (new schema reads old data)'
          : 'forward (old schema reads new data)';
      lines.push(`${label}: ${result.compatible ? 'compatible' : 'INCOMPATIBLE'}`);
      for (const change of result.incompatibleChanges) {
        const { description, hint } = explain(change.type, change.path, name, undefined, policy);
        lines.push(`  ${line(change)}: ${description}`, `    hint: ${hint}`);
      }
    }
    lines.push(
      `evgen diff: ${compatible ? 'compatible' : 'incompatible'} under ${mode} (policy ${policy})`,
    );
    // Property names and file names come from the schemas and the command line: one line each.
    process.stdout.write(`${lines.map(printable).join('\n')}\n`);
  }
  return compatible ? EXIT_OK : EXIT_FINDINGS;
}
