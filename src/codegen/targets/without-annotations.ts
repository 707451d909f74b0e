/**
 * Drops keywords that never change what a validator accepts (titles, descriptions, examples, …)
 * from a schema before it is compiled: ajv copies every compiled schema into the standalone
 * module as a constant, and subschemas that differ only in their documentation can then be
 * compiled once (`shared-subschemas.ts`). Only for compiling: types and docs read the schema
 * as written.
 */
import type { JsonSchema } from '../../catalog/model.js';
import { mapSchema } from '../../schema/walk.js';

/**
 * Annotation keywords ajv ignores with evgen's options (no `useDefaults`, no `$comment` hook,
 * `strict: false`). Only keys of schema objects are dropped: a property named `title` inside
 * `properties` is a subschema position, not a keyword, and stays.
 */
export const ANNOTATION_KEYWORDS: ReadonlySet<string> = new Set([
  '$comment',
  'default',
  'deprecated',
  'description',
  'examples',
  'readOnly',
  'title',
  'writeOnly',
]);

/** A copy of `schema` without annotation keywords; input untouched. */
export function withoutAnnotations(schema: JsonSchema): JsonSchema {
  return mapSchema(schema, (node) => {
    if (!Object.keys(node).some((keyword) => ANNOTATION_KEYWORDS.has(keyword))) return node;
    return Object.fromEntries(
      Object.entries(node).filter(([keyword]) => !ANNOTATION_KEYWORDS.has(keyword)),
    );
  }) as JsonSchema;
}
