/**
 * Which JSON Schema dialect a file speaks, and the ajv instances that check schemas against their
 * meta-schema. Only draft-07 and 2020-12 are accepted; a file without `$schema` is draft-07.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { CatalogProblem } from './catalog-error.js';
import { isObject } from '../common/json-value.js';
import { withLinearEnumUniqueness } from '../schema/linear-enum-uniqueness.js';

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule.default;

export type Dialect = 'draft-07' | '2020-12';

const DIALECT_URIS: Readonly<Record<string, Dialect>> = {
  'http://json-schema.org/draft-07/schema#': 'draft-07',
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'https://json-schema.org/draft-07/schema#': 'draft-07',
  'https://json-schema.org/draft-07/schema': 'draft-07',
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'https://json-schema.org/draft/2020-12/schema#': '2020-12',
};

/** The `$id` ajv registers each dialect's meta-schema under. */
const META_SCHEMA_IDS: Readonly<Record<Dialect, string>> = {
  'draft-07': 'http://json-schema.org/draft-07/schema',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
};

/** The dialect a schema declares; undefined (with no `$schema`) means "not declared". */
export function declaredDialect(schema: unknown): Dialect | 'unsupported' | undefined {
  if (!isObject(schema) || schema.$schema === undefined) return undefined;
  return typeof schema.$schema === 'string'
    ? (DIALECT_URIS[schema.$schema] ?? 'unsupported')
    : 'unsupported';
}

/** Where a dialect keeps reusable schemas. */
export function definitionsKeyword(dialect: Dialect): 'definitions' | '$defs' {
  return dialect === '2020-12' ? '$defs' : 'definitions';
}

/**
 * One ajv instance per dialect and catalog load, each made on first use; a dialect's meta-schema
 * validator is compiled (the slow part) only when a file must be checked against it, which a
 * build whose cache already knows every file never does.
 */
export class SchemaCheckers {
  readonly #instances = new Map<Dialect, Ajv | Ajv2020>();

  #instance(dialect: Dialect): Ajv | Ajv2020 {
    let ajv = this.#instances.get(dialect);
    if (ajv === undefined) {
      const options = {
        allErrors: true,
        strict: false,
        logger: false,
        validateFormats: true,
        // Every file is checked against its meta-schema once, below; not again on compile.
        validateSchema: false,
        // Only whether a schema compiles matters here, not the code: ajv's optimising pass is
        // quadratic in nested branches (anyOf of 400 objects: seconds).
        code: { optimize: false },
      } as const;
      ajv =
        dialect === 'draft-07' ? withLinearEnumUniqueness(new Ajv(options)) : new Ajv2020(options);
      addFormats(ajv);
      this.#instances.set(dialect, ajv);
    }
    return ajv;
  }

  /** Meta-schema violations, one problem per place in the file. */
  validateAgainstMetaSchema(schema: unknown, dialect: Dialect, file: string): CatalogProblem[] {
    const validate = this.#instance(dialect).getSchema(META_SCHEMA_IDS[dialect])!;
    if (validate(schema)) return [];
    return ajvErrorsToProblems(validate.errors ?? [], file, {
      code: 'invalid-schema',
      hint: `make it a valid JSON Schema (${dialect}); see https://json-schema.org`,
    });
  }

  /** Compiles a self-contained schema; returns ajv's complaint (bad regex, unknown format, …) or undefined. */
  compileError(schema: unknown, dialect: Dialect): string | undefined {
    try {
      this.#instance(dialect).compile(schema as object);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  #knownFormats: readonly string[] | undefined;

  /**
   * Format names validators know (ajv-formats' full set), sorted. Listed once: every schema file
   * is checked against it, and sorting it per file was a visible part of loading a catalog.
   */
  get knownFormats(): readonly string[] {
    return (this.#knownFormats ??= Object.freeze(
      Object.keys(this.#instance('draft-07').formats).sort(),
    ));
  }

  /** A validator for evgen's own files (event.json, consumers), always draft-07. */
  metadataValidator(schema: object): ValidateFunction {
    return this.#instance('draft-07').compile(schema);
  }
}

/**
 * Turns ajv errors into problems, one per instance location. anyOf/oneOf summaries are dropped
 * when a more specific error exists at the same place, so people see the useful line.
 */
export function ajvErrorsToProblems(
  errors: readonly ErrorObject[],
  file: string,
  defaults: { code: string; hint: string },
): CatalogProblem[] {
  const byPath = new Map<string, ErrorObject[]>();
  for (const error of errors) {
    const list = byPath.get(error.instancePath) ?? [];
    list.push(error);
    byPath.set(error.instancePath, list);
  }
  const problems: CatalogProblem[] = [];
  for (const [pointer, list] of byPath) {
    const specific = list.filter(
      (error) => !['anyOf', 'oneOf', 'if', 'not'].includes(error.keyword),
    );
    let chosen = specific.length > 0 ? specific : list;
    // `"type": "strin"` fails both "one of the simple types" and "an array of them"; the first says it.
    if (chosen.some((error) => error.keyword === 'enum'))
      chosen = chosen.filter((error) => error.keyword !== 'type');
    const messages = [...new Set(chosen.map(describeAjvError))];
    problems.push({
      code: defaults.code,
      file,
      pointer,
      message: messages.join('; '),
      hint: defaults.hint,
    });
  }
  return problems;
}

function describeAjvError(error: ErrorObject): string {
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues ?? [];
    return `must be one of ${allowed.map((value) => JSON.stringify(value)).join(', ')}`;
  }
  if (error.keyword === 'required') {
    return `missing required key "${(error.params as { missingProperty: string }).missingProperty}"`;
  }
  if (error.keyword === 'additionalProperties') {
    return `unknown key "${(error.params as { additionalProperty: string }).additionalProperty}"`;
  }
  return error.message ?? `fails "${error.keyword}"`;
}
