/**
 * Bundled schemas known to compile, remembered between runs by the caller (the CLI's build
 * cache) so an unchanged schema is not compiled again: compiling every schema with ajv is the
 * largest part of loading a catalog. Only successes are remembered; a schema that fails is
 * compiled each time, so its problem is always reported the same way.
 */
import { createHash } from 'node:crypto';

export interface CompiledSchemas {
  has(key: string): boolean;
  add(key: string): void;
}

/** The key of a bundled schema in `CompiledSchemas`: its dialect and exact JSON. */
export function compiledSchemaKey(bundled: unknown, dialect: string): string {
  return createHash('sha256')
    .update(dialect)
    .update('\u0000')
    .update(JSON.stringify(bundled))
    .digest('hex');
}
