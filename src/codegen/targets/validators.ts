/**
 * Target `validators`: `<event dir>/validators.js` + `validators.d.ts`. Per version two ajv
 * standalone validators, wrapped into evgen `PayloadValidator`s:
 *
 * - `validateOrderCreatedV2Payload` — WRITER, strict: undeclared properties are rejected everywhere;
 * - `readOrderCreatedV2Payload` — READER, tolerant: undeclared properties are accepted everywhere.
 *
 * (see `payload-schemas.ts`). The code is plain ES module JavaScript with a declaration file
 * beside it, so it needs no compilation and imports under Node, vitest and TypeScript alike.
 * ajv's standalone output `require`s a few CommonJS runtime helpers even in ESM mode; the module
 * provides `require` through `createRequire(import.meta.url)`, so it stays a valid ES module for
 * Node. The output still needs `ajv` and `ajv-formats` installed at run time.
 */
import { Ajv, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { EventDefinition, JsonSchema } from '../../catalog/model.js';
import { versionNames } from '../naming.js';
import { identifier } from '../render/safe-code.js';
import { renderTemplate, trusted } from '../render/templates.js';
import type { GeneratedFile, Target } from '../target.js';
import { eventFile } from './event-files.js';
import { dialectOf, readerSchema, writerSchema } from '../../schema/views.js';

// Both are CommonJS; under NodeNext their default import is the module object.
const addFormats = addFormatsModule.default;
const standaloneCode = standaloneModule.default;

const AJV_OPTIONS: Options = {
  code: { source: true, esm: true },
  // Shared definitions (Money, Address) become one function each instead of being inlined at every use.
  inlineRefs: false,
  // Report every violation, not the first: parseEnvelope and createEnvelope list them all.
  allErrors: true,
  // The catalog loader already rejected unknown keywords it cares about; annotations are fine.
  strict: false,
  // …but only finite numbers: `strict: false` would also let NaN and Infinity pass `type: number`,
  // and JSON.stringify sends them as `null`, which every reader rejects (1e400 parses to Infinity).
  strictNumbers: true,
  validateFormats: true,
  // Only own properties count: an absent optional `constructor` or `toString` must not be read
  // from Object.prototype (and fail its type), nor an inherited value satisfy `required`.
  ownProperties: true,
};

function newAjv(schema: JsonSchema) {
  switch (dialectOf(schema)) {
    case '2020-12':
      return new Ajv2020(AJV_OPTIONS);
    case '2019-09':
      return new Ajv2019(AJV_OPTIONS);
    default:
      return new Ajv(AJV_OPTIONS);
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

/** One validation function as standalone code in a block, plus the modules it imports. */
export function standaloneFunction(
  schema: JsonSchema,
  constName: string,
): { code: string; imports: Set<string> } {
  const ajv = newAjv(schema);
  addFormats(ajv);
  ajv.addSchema(schema as object, 'payload');
  let code = standaloneCode(ajv, { evgenExport: 'payload' });
  const exportLine = /export const evgenExport = (validate\d+);/.exec(code);
  if (exportLine === null)
    throw new Error('unexpected ajv standalone output: no export of the validation function');
  code = code.replace(exportLine[0], '').replace(/^"use strict";/, '');
  const imports = new Set<string>();
  for (const [, specifier] of code.matchAll(REQUIRE_CALL)) {
    if (!KNOWN_REQUIRES.has(specifier!))
      throw new Error(
        `ajv standalone code requires an unexpected module ${JSON.stringify(specifier)}`,
      );
    imports.add(specifier!);
  }
  // A block per function: ajv names its constants schema11, validate10, … in every output.
  return {
    code: `const ${identifier(constName)} = (() => {\n${code}\nreturn ${exportLine[1]};\n})();`,
    imports,
  };
}

async function eventValidators(
  event: EventDefinition,
  runtimeImport: string,
): Promise<GeneratedFile[]> {
  const imports = new Set<string>();
  const versions = event.versions.map((version) => {
    const names = versionNames(event, version.version);
    const writer = standaloneFunction(
      writerSchema(version.bundled),
      `${names.validatorName}Compiled`,
    );
    const reader = standaloneFunction(readerSchema(version.bundled), `${names.readerName}Compiled`);
    for (const specifier of [...writer.imports, ...reader.imports]) imports.add(specifier);
    return {
      ...names,
      version: version.version,
      file: version.file,
      writerCode: trusted(writer.code),
      readerCode: trusted(reader.code),
    };
  });
  const context = {
    eventType: event.eventType,
    runtimeImport,
    versions,
    usesRequire: imports.size > 0,
  };
  return [
    await eventFile(event, 'validators.js', renderTemplate('validators.js', context)),
    await eventFile(event, 'validators.d.ts', renderTemplate('validators.d', context)),
  ];
}

export const validatorsTarget: Target = {
  name: 'validators',
  description: 'ajv standalone validators per event version: strict writer and tolerant reader',
  async generate({ catalog, runtimeImport }) {
    const files: GeneratedFile[] = [];
    for (const event of catalog.events)
      files.push(...(await eventValidators(event, runtimeImport)));
    return files;
  },
};
