/**
 * One payload schema `v<N>.schema.json`: read, checked against its dialect, bundled with the
 * schemas it references, known to compile (ajv compiles it unless `certainlyCompiles` or the
 * build cache already knows), and checked to declare the event's aggregateId.
 */
import { join } from 'node:path';
import { compiledSchemaKey } from './compiled-schemas.js';
import { bundleSchema, catalogPath, placeOf } from './bundle-schema.js';
import { certainlyCompiles } from './certainly-compiles.js';
import { checkAggregateId } from './check-aggregate-id.js';
import type { LoadContext } from './load-context.js';
import type { LoadedVersion } from './loaded-versions.js';
import type { EventVersion, JsonSchema } from './model.js';
import { schemaComplexityProblems } from './schema-complexity.js';
import type { SchemaFile } from './schema-files.js';

export async function loadVersion(
  dir: string,
  version: number,
  aggregateId: string | undefined,
  context: LoadContext,
): Promise<EventVersion | undefined> {
  const path = join(dir, `v${version}.schema.json`);
  const file = await context.files.load(path);
  if (file === undefined) return undefined;
  const catalogFile = catalogPath(path, context.root);
  const remembered = context.loadedVersions?.get(catalogFile);
  if (remembered !== undefined && (await stillValid(remembered, file, aggregateId, context))) {
    context.loadedVersions?.add(catalogFile, remembered);
    return {
      version,
      file: catalogFile,
      schema: file.value as JsonSchema,
      bundled: remembered.bundled,
    };
  }
  const dialect = file.dialect ?? 'draft-07';
  if (!context.files.validate(file, dialect)) return undefined;
  const inlined: SchemaFile[] = [];
  const bundled = await bundleSchema(file, dialect, {
    catalogRoot: context.root,
    files: context.files,
    problems: context.problems,
    onInlined: (dependency) => inlined.push(dependency),
  });
  if (bundled === undefined) return undefined;
  // Before ajv compiles it: a hostile schema would otherwise take minutes or overflow the stack.
  const tooComplex = schemaComplexityProblems(bundled, file.display);
  if (tooComplex.length > 0) {
    for (const problem of tooComplex) context.problems.add(problem);
    return undefined;
  }
  const known = context.compiledSchemas;
  const key = known && compiledSchemaKey(bundled, dialect);
  const compileError =
    (key !== undefined && known?.has(key) === true) || certainlyCompiles(bundled, dialect)
      ? undefined
      : context.checkers.compileError(bundled, dialect);
  if (compileError === undefined && key !== undefined) known?.add(key);
  if (compileError !== undefined) {
    context.problems.add({
      code: 'invalid-schema',
      file: file.display,
      pointer: '',
      message: `ajv cannot compile the schema: ${compileError}`,
      hint: 'fix the schema so a validator can be built from it',
    });
    return undefined;
  }
  if (aggregateId !== undefined) {
    const problem = checkAggregateId(bundled, aggregateId, file.display);
    if (problem !== undefined) {
      context.problems.add(problem);
      return undefined;
    }
  }
  context.loadedVersions?.add(catalogFile, {
    content: file.content,
    aggregateId: aggregateId ?? null,
    dependencies: inlined.map((dependency) => ({
      file: catalogPath(dependency.absolutePath, context.root),
      content: dependency.content,
    })),
    bundled,
  });
  return { version, file: catalogFile, schema: file.value as JsonSchema, bundled };
}

/**
 * Whether a remembered load still holds: the same schema text and aggregateId, and each inlined
 * file, checked in the order bundling reached it and as bundling checks it (a file, inside the
 * events folder through any links, readable), with the same text. The first difference stops
 * the check, so nothing is read that a fresh load would not read too.
 */
async function stillValid(
  remembered: LoadedVersion,
  file: SchemaFile,
  aggregateId: string | undefined,
  context: LoadContext,
): Promise<boolean> {
  if (remembered.content !== file.content || remembered.aggregateId !== (aggregateId ?? null))
    return false;
  for (const dependency of remembered.dependencies) {
    const path = join(context.root, ...dependency.file.split('/'));
    // As bundling asks it, and from the same per-load answers.
    if (placeOf(path, context.files, context.root) !== 'inside') return false;
    if ((await context.files.load(path))?.content !== dependency.content) return false;
  }
  return true;
}
