/**
 * Loads each schema file of the catalog once (event versions and the shared files they `$ref`),
 * checks it against its dialect's meta-schema, and remembers the result.
 */
import { checkKeywords } from './check-keywords.js';
import { duplicateEnumValues } from './duplicate-enum-values.js';
import type { ProblemList } from './problem-list.js';
import { displayPath, readJsonFile } from './read-json-file.js';
import { declaredDialect, type Dialect, type SchemaCheckers } from './schema-dialect.js';
import { sha256 } from '../common/sha256.js';
import { walkSchema } from '../schema/walk.js';

export interface SchemaFile {
  readonly absolutePath: string;
  /** As problems name it (relative to the working folder). */
  readonly display: string;
  readonly value: unknown;
  /** Declared by `$schema`; undefined when the file does not say. */
  readonly dialect: Dialect | undefined;
  /** sha256 of the file's text: what a remembered load of it is compared against. */
  readonly content: string;
}

export class SchemaFiles {
  readonly #loaded = new Map<string, Promise<SchemaFile | undefined>>();
  readonly #validated = new Map<string, boolean>();

  constructor(
    private readonly problems: ProblemList,
    private readonly checkers: SchemaCheckers,
  ) {}

  /** The parsed file, or undefined when it is unreadable or not a usable schema (problems recorded). */
  load(absolutePath: string): Promise<SchemaFile | undefined> {
    let pending = this.#loaded.get(absolutePath);
    if (pending === undefined) {
      pending = this.#read(absolutePath);
      this.#loaded.set(absolutePath, pending);
    }
    return pending;
  }

  /**
   * Checks the file against the meta-schema of `dialect` (its own when declared, else the one of
   * the schema that uses it). Returns false when it is not a valid schema.
   */
  validate(file: SchemaFile, dialect: Dialect): boolean {
    const key = `${file.dialect ?? dialect}\0${file.absolutePath}`;
    const known = this.#validated.get(key);
    if (known !== undefined) return known;
    let found = this.checkers.validateAgainstMetaSchema(
      file.value,
      file.dialect ?? dialect,
      file.display,
    );
    if (found.length === 0)
      found = [
        ...checkKeywords(
          file.value,
          file.dialect ?? dialect,
          this.checkers.knownFormats,
          file.display,
        ),
        ...duplicateEnumValues(file.value, file.display),
      ];
    for (const problem of found) this.problems.add(problem);
    const nestedIds = nestedIdPointers(file);
    for (const pointer of nestedIds) {
      this.problems.add({
        code: 'nested-id-unsupported',
        file: file.display,
        pointer,
        message: '"$id" below the root of a schema is not supported',
        hint: 'remove this "$id"; reference other files by relative path instead',
      });
    }
    const valid = found.length === 0 && nestedIds.length === 0;
    this.#validated.set(key, valid);
    return valid;
  }

  async #read(absolutePath: string): Promise<SchemaFile | undefined> {
    const read = await readJsonFile(absolutePath, this.problems);
    if (!read.ok) return undefined;
    const display = displayPath(absolutePath);
    const dialect = declaredDialect(read.value);
    if (dialect === 'unsupported') {
      this.problems.add({
        code: 'unsupported-schema-dialect',
        file: display,
        pointer: '/$schema',
        message: `unsupported "$schema" ${JSON.stringify((read.value as { $schema: unknown }).$schema)}`,
        hint: 'use "http://json-schema.org/draft-07/schema#" or "https://json-schema.org/draft/2020-12/schema"',
      });
      return undefined;
    }
    // Hashed only when read (a remembered load is compared): a check without a cache never does.
    const text = read.text;
    let content: string | undefined;
    return {
      absolutePath,
      display,
      value: read.value,
      dialect,
      get content() {
        return (content ??= sha256(text));
      },
    };
  }
}

/** `$id` below the root would change how `#/...` references resolve there; evgen does not support it. */
function nestedIdPointers(file: SchemaFile): string[] {
  const found: string[] = [];
  walkSchema(file.value, (node, position) => {
    if (Object.prototype.hasOwnProperty.call(node, '$id') && position.pointer !== '')
      found.push(`${position.pointer}/$id`);
  });
  return found;
}
