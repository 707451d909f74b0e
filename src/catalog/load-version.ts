/**
 * One payload schema `v<N>.schema.json`: read, checked against its dialect, bundled with the
 * schemas it references, compiled once by ajv, and checked to declare the event's aggregateId.
 */
import { compiledSchemaKey } from './compiled-schemas.js';
import { join } from 'node:path';
import { bundleSchema } from './bundle-schema.js';
import { checkAggregateId } from './check-aggregate-id.js';
import type { LoadContext } from './load-context.js';
import type { EventVersion, JsonSchema } from './model.js';
import { schemaComplexityProblems } from './schema-complexity.js';

export async function loadVersion(
  dir: string,
  version: number,
  aggregateId: string | undefined,
  context: LoadContext,
): Promise<EventVersion | undefined> {
  const path = join(dir, `v${version}.schema.json`);
  const file = await context.files.load(path);
  if (file === undefined) return undefined;
  const dialect = file.dialect ?? 'draft-07';
  if (!context.files.validate(file, dialect)) return undefined;
  const bundled = await bundleSchema(file, dialect, {
    catalogRoot: context.root,
    files: context.files,
    problems: context.problems,
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
    key !== undefined && known?.has(key) === true
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
  return {
    version,
    file: `${dir
      .slice(context.root.length + 1)
      .split(/[\\/]/)
      .join('/')}/v${version}.schema.json`,
    schema: file.value as JsonSchema,
    bundled,
  };
}
