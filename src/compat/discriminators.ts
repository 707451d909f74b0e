/**
 * A cheap proof that one object schema cannot read another, used before comparing two union
 * branches in full. Branches of a tagged union are told apart by a property with a fixed value
 * (`kind: {const: "a"}`, `type: {enum: [...]}`); when the writer's branch may send a tag value
 * the reader's branch does not list, the full comparison of the two branches always ends in an
 * incompatible difference:
 * - both are plain object schemas, so the object rules compare every property both declare and
 *   keep each property's differences (nothing can excuse them at the level of the branch);
 * - a tag schema is a `const`/`enum`, alone or beside one `type` and its keywords (a synthetic
 *   allOf of two facets); a lost value is ENUM_ARRAY_CHANGED/NARROWED or TYPE_CHANGED, and every
 *   part-by-part reading of the two-facet form meets a lost value, a kind change or a reader
 *   facet the writer lacks (PRODUCT_TYPE_EXTENDED) — incompatible under every policy.
 * Skipping such pairs therefore changes no edge of the branch matching, only its cost: a union of
 * n tagged branches against a changed copy compares about n pairs instead of n².
 * `test/compat/union-pairing.test.ts` compares verdicts and reports with the exhaustive pairing.
 */
import { canonicalJson } from '../common/canonical-json.js';
import { isObject } from '../common/json-value.js';
import type { SchemaNode } from './schema-document.js';
import { childOf, followReferences, shapeOf } from './schema-shape.js';

/** Tag values by property name (only properties whose schema is a tag, see above). */
type Tags = ReadonlyMap<string, ReadonlySet<string>>;

const NONE: Tags = new Map();
/** Per schema object, per facet and dialect (both change how the object reads). */
const cache = new WeakMap<object, Map<string, Tags>>();

/** The values a tag schema allows, or undefined when `value` is not a tag schema. */
function tagValues(node: SchemaNode): ReadonlySet<string> | undefined {
  const { value } = node;
  if (!isObject(value) || value['$ref'] !== undefined) return undefined;
  const shape = shapeOf(node);
  const valued = (kind: string | undefined) => kind === 'const' || kind === 'enum';
  let kind: string | undefined = shape.kind;
  if (shape.kind === 'combined') {
    const facets = (shape.subschemas ?? []).map((node) => node.facet ?? '');
    const tag = facets.filter((facet) => valued(facet));
    const types = facets.filter((facet) => facet.startsWith('type:'));
    if (shape.synthetic !== true || facets.length !== 2 || tag.length !== 1 || types.length !== 1)
      return undefined;
    kind = tag[0];
  }
  if (!valued(kind)) return undefined;
  if (kind === 'const') return new Set([canonicalJson(value['const'])]);
  const values = value['enum'];
  return new Set((Array.isArray(values) ? values : []).map(canonicalJson));
}

function tagsOf(node: SchemaNode): Tags {
  let resolved: SchemaNode;
  try {
    resolved = followReferences(node);
  } catch {
    return NONE; // the full comparison reports the bad reference
  }
  const { value } = resolved;
  if (!isObject(value)) return NONE;
  const key = `${resolved.facet ?? ''}|${resolved.doc.dialect}`;
  let byKey = cache.get(value);
  const known = byKey?.get(key);
  if (known !== undefined) return known;
  let tags: Tags = NONE;
  try {
    const shape = shapeOf(resolved);
    const properties = shape.keywords['properties'];
    if (shape.kind === 'object' && isObject(properties)) {
      const found = new Map<string, ReadonlySet<string>>();
      for (const [name, schema] of Object.entries(properties)) {
        const values = tagValues(childOf(shape, schema));
        if (values !== undefined) found.set(name, values);
      }
      if (found.size > 0) tags = found;
    }
  } catch {
    tags = NONE;
  }
  if (byKey === undefined) {
    byKey = new Map<string, Tags>();
    cache.set(value, byKey);
  }
  byKey.set(key, tags);
  return tags;
}

/**
 * True when `reader` surely cannot read what `writer` allows: both are plain object schemas and
 * a tag property both declare lets the writer send a value the reader's tag does not allow.
 * False says nothing (the pair must be compared).
 */
export function tagsExclude(writer: SchemaNode, reader: SchemaNode): boolean {
  const written = tagsOf(writer);
  if (written.size === 0) return false;
  const read = tagsOf(reader);
  if (read.size === 0) return false;
  for (const [name, values] of written) {
    const allowed = read.get(name);
    if (allowed === undefined) continue;
    for (const value of values) if (!allowed.has(value)) return true;
  }
  return false;
}
