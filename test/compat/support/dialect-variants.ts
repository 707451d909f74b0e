/**
 * Rewrites draft-07 test schemas into other spellings of the same meaning, so the conformance
 * cases also run as 2020-12 schemas and inside combined schemas:
 * - 2020-12: `definitions` → `$defs` (references follow), tuple `items: [...]` → `prefixItems`
 *   with `additionalItems` → `items`, `dependencies` → `dependentRequired` / `dependentSchemas`.
 * - wrapped: the schema as the only member of an `allOf`.
 */
import { mapSchema } from '../../../src/schema/walk.js';

export function toDraft2020(schema: unknown): unknown {
  const rewritten = mapSchema(schema, (node) => {
    const copy: Record<string, unknown> = { ...node };
    if (copy['definitions'] !== undefined) {
      copy['$defs'] = copy['definitions'];
      delete copy['definitions'];
    }
    if (typeof copy['$ref'] === 'string')
      copy['$ref'] = copy['$ref'].replace('#/definitions/', '#/$defs/');
    if (
      Array.isArray(copy['items']) ||
      (copy['additionalItems'] !== undefined && copy['items'] === undefined)
    ) {
      // A draft-07 tuple (an empty one when only additionalItems is given) and its rest.
      copy['prefixItems'] = Array.isArray(copy['items']) ? copy['items'] : [];
      delete copy['items'];
      if (copy['additionalItems'] !== undefined) copy['items'] = copy['additionalItems'];
    }
    delete copy['additionalItems'];
    const dependencies = copy['dependencies'];
    if (typeof dependencies === 'object' && dependencies !== null) {
      const required: Record<string, unknown> = {};
      const schemas: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(dependencies))
        (Array.isArray(value) ? required : schemas)[key] = value;
      delete copy['dependencies'];
      if (Object.keys(required).length > 0) copy['dependentRequired'] = required;
      if (Object.keys(schemas).length > 0 || Object.keys(required).length === 0)
        copy['dependentSchemas'] = schemas;
    }
    if (copy['$schema'] !== undefined)
      copy['$schema'] = 'https://json-schema.org/draft/2020-12/schema';
    return copy;
  });
  if (typeof rewritten === 'object' && rewritten !== null && !Array.isArray(rewritten)) {
    return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...rewritten };
  }
  return rewritten;
}

/** `{ allOf: [schema] }`, keeping `definitions`/`$defs` at the root so references still resolve. */
export function wrapInAllOf(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return { allOf: [schema] };
  const { definitions, $defs, ...rest } = schema as Record<string, unknown>;
  return {
    allOf: [rest],
    ...(definitions !== undefined ? { definitions } : {}),
    ...($defs !== undefined ? { $defs } : {}),
  };
}
