/**
 * ajv's draft-07 meta-schema requires `enum` values to be unique, and ajv checks an untyped
 * array for repeats by comparing every pair: 100,000 values take minutes. This swaps the
 * meta-schema of an ajv instance for the published one minus that single check (same `$id`, so
 * every schema declaring draft-07 is checked against it); the catalog loader checks enum
 * uniqueness itself in linear time. Nothing else about validation changes.
 */
import { createRequire } from 'node:module';
import type { Ajv } from 'ajv';

const require = createRequire(import.meta.url);
const DRAFT_07 = 'http://json-schema.org/draft-07/schema';

export function withLinearEnumUniqueness<T extends Ajv>(ajv: T): T {
  const meta = structuredClone(
    require('ajv/dist/refs/json-schema-draft-07.json') as {
      properties: { enum: Record<string, unknown> };
    },
  );
  delete meta.properties.enum.uniqueItems;
  ajv.removeSchema(DRAFT_07);
  // Added the way ajv adds its own meta-schemas (not validated; compiled with formats off).
  ajv.addMetaSchema(meta, DRAFT_07, false);
  return ajv;
}
