/**
 * Target `validators`: `<event dir>/validators.js` + `validators.d.ts`. Per version two ajv
 * standalone validators, wrapped into evgen `PayloadValidator`s:
 *
 * - `validateOrderCreatedV2Payload` — WRITER, strict: undeclared properties are rejected everywhere;
 * - `readOrderCreatedV2Payload` — READER, tolerant: undeclared properties are accepted everywhere.
 *
 * (see `payload-schemas.ts`). All validators of one event come from ONE ajv instance and one
 * standalone module, so ajv's runtime helpers, formats and regular expressions are declared once
 * per event, and a subschema shared by several versions or by the writer and reader views is
 * compiled once (`shared-subschemas.ts`). Where a writer is its reader plus closed objects, its
 * function runs the reader's and then only the closedness check (`writer-closedness.ts`). Error
 * messages are not in the code: the runtime writes them on failure, and the schema constants
 * ajv declares but the code never reads are dropped (`unused-schema-constants.ts`); error reports
 * and call contexts are written in a shorter shape (`compact-ajv-code.ts`). The ajv code is
 * machine-written and left compact (one statement run per line, never run through a formatter);
 * it is still deterministic.
 *
 * The code is plain ES module JavaScript with a declaration file beside it, so it needs no
 * compilation and imports under Node, vitest and TypeScript alike. ajv's standalone output
 * `require`s a few CommonJS runtime helpers even in ESM mode; the module provides `require`
 * through `createRequire(import.meta.url)`, so it stays a valid ES module for Node. The output
 * still needs `ajv` and `ajv-formats` installed at run time.
 */
import { Ajv, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { EventDefinition, JsonSchema } from '../../catalog/model.js';
import { versionNames } from '../../common/naming.js';
import { identifier } from '../render/safe-code.js';
import { renderTemplate, trusted } from '../render/templates.js';
import type { Target, TargetFile } from '../target.js';
import { eventFile } from './event-files.js';
import { dialectOf, readerSchema, writerSchema, type Dialect } from '../../schema/views.js';
import { shareSubschemas } from './shared-subschemas.js';
import { withLinearEnumUniqueness } from '../../schema/linear-enum-uniqueness.js';
import { withContainsItemFloor } from './contains-item-floor.js';
import { withoutAnnotations } from './without-annotations.js';
import { writerClosedness } from './writer-closedness.js';
import { withoutUnusedSchemaConstants } from './unused-schema-constants.js';
import { compactAjvCode } from './compact-ajv-code.js';
import { isObject } from '../../common/json-value.js';
import { linearPattern } from '../../runtime/linear-pattern.js';

// Both are CommonJS; under NodeNext their default import is the module object.
const addFormats = addFormatsModule.default;
const standaloneCode = standaloneModule.default;

const AJV_OPTIONS: Options = {
  // One statement per line (`code.lines`): compact, but a change to a schema gives a readable diff.
  // Shared definitions (Money, Address) become one function each instead of being inlined at every use.
  inlineRefs: false,
  // Report every violation, not the first: parseEnvelope and createEnvelope list them all.
  allErrors: true,
  // No message text in the generated code: the runtime makes ajv's message from the keyword and
  // parameters when a payload fails (src/runtime/schema-error-message.ts).
  messages: false,
  // The catalog loader already rejected unknown keywords it cares about; annotations are fine.
  strict: false,
  // The loader checked every schema file against its dialect's meta-schema; checking again here
  // would compile the meta-schema once per event (each event has its own instance).
  validateSchema: false,
  // …but only finite numbers: `strict: false` would also let NaN and Infinity pass `type: number`,
  // and JSON.stringify sends them as `null`, which every reader rejects (1e400 parses to Infinity).
  strictNumbers: true,
  validateFormats: true,
  // Only own properties count: an absent optional `constructor` or `toString` must not be read
  // from Object.prototype (and fail its type), nor an inherited value satisfy `required`.
  ownProperties: true,
  // `pattern` and `patternProperties` run on RE2 (linear in the input), not on JavaScript's
  // backtracking engine: one crafted string must not block a consumer (linear-pattern.ts).
  // Generated modules reach the engine as `linearPattern`, imported from evgen's runtime.
  code: { source: true, esm: true, lines: true, regExp: linearPattern },
};

/**
 * A fresh ajv instance of `dialect` with evgen's options (formats not yet added); tests compare
 * with `{ messages: true }`.
 */
export function newAjv(dialect: Dialect, overrides: Options = {}) {
  const options = { ...AJV_OPTIONS, ...overrides };
  switch (dialect) {
    case '2020-12':
      return new Ajv2020(options);
    case '2019-09':
      return new Ajv2019(options);
    default:
      return withLinearEnumUniqueness(new Ajv(options));
  }
}

/**
 * Module specifiers ajv's standalone code may `require`. They stay `require` calls, served by
 * `createRequire(import.meta.url)`: these modules are CommonJS, and a default `import` of them
 * yields `module.exports` under Node but `exports.default` under bundlers such as vite, so only
 * `require` means the same thing everywhere.
 */
const KNOWN_REQUIRES: ReadonlySet<string> = new Set([
  'ajv-formats/dist/formats',
  'ajv/dist/runtime/equal',
  'ajv/dist/runtime/parseJson',
  'ajv/dist/runtime/quote',
  'ajv/dist/runtime/re2',
  'ajv/dist/runtime/timestamp',
  'ajv/dist/runtime/ucs2length',
  'ajv/dist/runtime/uri',
  'ajv/dist/runtime/validation_error',
]);

const REQUIRE_CALL = /require\("([^"]+)"\)/g;
const EXPORT_LINE = /export const ([A-Za-z_$][\w$]*) = (validate\d+);/g;

/** One validation function to compile: the name it is bound to and its schema. */
export interface ValidatorSource {
  readonly name: string;
  readonly schema: JsonSchema;
  /**
   * Name of another source of the same call (and dialect) whose validator must pass too: the
   * function checks that one first, then `schema` (a writer as its reader plus closedness).
   */
  readonly alsoPasses?: string;
}

/**
 * Standalone code of several validation functions that share one ajv instance: `code` binds
 * each given name to its function (`const name = validate12;`); `imports` lists the modules it
 * `require`s. Sources of different dialects get one instance each, in a block of their own
 * (ajv numbers its names from the start in every instance).
 */
export function standaloneValidators(sources: readonly ValidatorSource[]): {
  code: string;
  imports: Set<string>;
} {
  const dialects = [...new Set(sources.map((source) => dialectOf(source.schema)))].sort();
  const imports = new Set<string>();
  const blocks = dialects.map((dialect) => {
    const group = sources.filter((source) => dialectOf(source.schema) === dialect);
    const ajv = newAjv(dialect);
    addFormats(ajv);
    // ajv 8.20 lets an empty array pass `contains` under `items`/`additionalProperties` once an
    // earlier instance passed (contains-item-floor.ts); an implied `minItems` avoids it.
    const keyOf = (name: string) => {
      const index = group.findIndex((source) => source.name === name);
      if (index < 0) throw new Error(`no validator ${JSON.stringify(name)} of dialect ${dialect}`);
      return `evgen${index}`;
    };
    const { views, shared } = shareSubschemas(
      group.map((source) => {
        const schema = withContainsItemFloor(withoutAnnotations(source.schema), dialect);
        if (source.alsoPasses === undefined || !isObject(schema)) return schema;
        const allOf: unknown[] = Array.isArray(schema.allOf) ? schema.allOf : [];
        return { ...schema, allOf: [{ $ref: keyOf(source.alsoPasses) }, ...allOf] };
      }),
    );
    for (const { id, schema } of shared) ajv.addSchema(schema, id);
    const refs: Record<string, string> = {};
    group.forEach((source, index) => {
      const key = `evgen${index}`;
      ajv.addSchema(views[index] as object, key);
      refs[key] = key;
    });
    let code = compactAjvCode(
      withoutUnusedSchemaConstants(standaloneCode(ajv, refs).replace(/^"use strict";/, '')),
    );
    const bound = new Map<string, string>();
    code = code.replace(EXPORT_LINE, (_line, key: string, fn: string) => {
      bound.set(key, fn);
      return '';
    });
    for (const [, specifier] of code.matchAll(REQUIRE_CALL)) {
      if (!KNOWN_REQUIRES.has(specifier!))
        throw new Error(
          `ajv standalone code requires an unexpected module ${JSON.stringify(specifier)}`,
        );
      imports.add(specifier!);
    }
    const functionOf = (index: number) => {
      const fn = bound.get(`evgen${index}`);
      if (fn === undefined)
        throw new Error('unexpected ajv standalone output: no export of a validation function');
      return fn;
    };
    const body = code.trim();
    const names = group.map((source) => identifier(source.name));
    if (dialects.length === 1)
      return `${body}\n${names.map((name, index) => `const ${name} = ${functionOf(index)};`).join('\n')}`;
    return `const { ${names.join(', ')} } = (() => {\n${body}\nreturn { ${names.map((name, index) => `${name}: ${functionOf(index)}`).join(', ')} };\n})();`;
  });
  return { code: blocks.join('\n'), imports };
}

/**
 * The sources of one payload schema's writer and reader validators. Where the writer is the
 * reader plus closed objects (writer-closedness.ts), the writer is compiled as the reader's
 * function plus the closedness check, not as a second copy of every check.
 */
export function viewSources(
  bundled: JsonSchema,
  writerName: string,
  readerName: string,
): ValidatorSource[] {
  const writer = writerSchema(bundled);
  const reader = readerSchema(bundled);
  const closedness = writerClosedness(writer, reader);
  return [
    closedness === undefined
      ? { name: writerName, schema: writer }
      : { name: writerName, schema: closedness, alsoPasses: readerName },
    { name: readerName, schema: reader },
  ];
}

async function eventValidators(
  event: EventDefinition,
  runtimeImport: string,
): Promise<TargetFile[]> {
  const versions = event.versions.map((version) => ({
    ...versionNames(event, version.version),
    version: version.version,
    file: version.file,
    bundled: version.bundled,
  }));
  const compiled = standaloneValidators(
    versions.flatMap((version) =>
      viewSources(
        version.bundled,
        `${version.validatorName}Compiled`,
        `${version.readerName}Compiled`,
      ),
    ),
  );
  const context = {
    eventType: event.eventType,
    runtimeImport,
    versions,
    usesRequire: compiled.imports.size > 0,
    usesLinearPattern: /\blinearPattern\b/.test(compiled.code),
    compiledCode: trusted(compiled.code),
  };
  return [
    // Not formatted: machine-written validation code, compact on purpose (formatting it used to
    // be most of a build's time).
    {
      ...eventFile(event, 'validators.js', renderTemplate('validators.js', context)),
      format: false,
    },
    {
      ...eventFile(event, 'validators.d.ts', renderTemplate('validators.d', context)),
      laidOut: true,
    },
  ];
}

export const validatorsTarget: Target = {
  name: 'validators',
  requires: ['types'],
  scope: 'event',
  async generate({ catalog, runtimeImport }) {
    const files: TargetFile[] = [];
    for (const event of catalog.events)
      files.push(...(await eventValidators(event, runtimeImport)));
    return files;
  },
};
