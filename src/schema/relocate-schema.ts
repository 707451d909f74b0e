/**
 * Moving a self-contained schema inside a bigger document and back. Local references
 * (`#/definitions/x`) are resolved against the whole document, so placing a schema at `base`
 * rewrites them to `#<base>/definitions/x`; taking it out again strips that prefix. The root's
 * `$schema` and `$id` are dropped when placing (a nested `$id` would change the base of every
 * reference): whoever places the schema keeps them if it needs them back.
 */
import { mapSchema } from './walk.js';

/** The schema with its local references rewritten for its new place at `base` (a JSON pointer). */
export function relocateSchema(schema: unknown, base: string): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  return mapSchema(
    schema,
    (node, { pointer }) => {
      const copy: Record<string, unknown> = { ...node };
      if (typeof copy.$ref === 'string' && copy.$ref.startsWith('#'))
        copy.$ref = `#${base}${copy.$ref.slice(1)}`;
      if (pointer === '') {
        delete copy.$schema;
        delete copy.$id;
      }
      return copy;
    },
    { copyData: true },
  );
}

/** The inverse of `relocateSchema` for the references: `#<base>/x` becomes `#/x` again. */
export function unrelocateSchema(schema: unknown, base: string): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const prefix = `#${base}`;
  return mapSchema(
    schema,
    (node) => {
      const copy: Record<string, unknown> = { ...node };
      if (
        typeof copy.$ref === 'string' &&
        (copy.$ref === prefix || copy.$ref.startsWith(`${prefix}/`))
      )
        copy.$ref = `#${copy.$ref.slice(prefix.length)}`;
      return copy;
    },
    { copyData: true },
  );
}
