/**
 * Makes identical subschemas of one event's validator views (writer and reader of every
 * version) compile to one function instead of one copy per view: a property or array-item
 * schema that occurs at least twice is moved into a shared schema with its own id and replaced
 * by a `$ref` to it. ajv compiles every `$ref` target once per instance (`inlineRefs: false`),
 * so one event module carries each such check once.
 *
 * Only values of `properties`, `patternProperties`, `items`, `prefixItems` and
 * `additionalItems` move: they validate another instance (a property value, an array element),
 * so evaluated-property tracking of the parent (`unevaluatedProperties`) is unaffected. A
 * subschema moves only when it is self-contained (no `$ref` and no identifier keyword inside,
 * no reference from elsewhere into it), so every reference resolves as before; errors keep
 * their instance path, keyword, parameters and message, only ajv's `schemaPath` differs.
 */
import type { JsonSchema } from '../../catalog/model.js';
import { parseRefPointer, resolveSegments } from '../../common/json-pointer.js';
import { isObject } from '../../common/json-value.js';
import { mapSchema, subschemasOf, type SchemaObject } from '../../schema/walk.js';
import { sortKeysDeep } from '../render/safe-code.js';

/** Prefix of the ids of shared schemas; never a relative reference a catalog can produce. */
export const SHARED_ID_PREFIX = 'urn:evgen:shared:';

/** Positions whose schema applies to another instance than its parent's. */
const MOVABLE_UNDER = new Set([
  'properties',
  'patternProperties',
  'items',
  'prefixItems',
  'additionalItems',
]);
/** Keywords that name or resolve locations: a subschema containing one stays where it is. */
const LOCATION_KEYWORDS = new Set([
  '$ref',
  '$id',
  'id',
  '$anchor',
  '$dynamicAnchor',
  '$dynamicRef',
  '$recursiveAnchor',
  '$recursiveRef',
  '$schema',
]);
/** Keywords that assert nothing: they do not make moving a subschema worth a function call. */
const ANNOTATIONS = new Set([
  'title',
  'description',
  '$comment',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
]);

/** Calls `visit(child, keyword)` for every direct subschema of `node`. */
function forEachChild(node: SchemaObject, visit: (child: unknown, keyword: string) => void): void {
  for (const { keyword, value } of subschemasOf(node)) visit(value, keyword);
}

interface Facts {
  /** Schema objects some local `$ref` points at. */
  readonly targets: Set<SchemaObject>;
}

function collectTargets(root: SchemaObject): Facts {
  const targets = new Set<SchemaObject>();
  const visit = (node: unknown) => {
    if (!isObject(node)) return;
    if (typeof node.$ref === 'string') {
      const segments = parseRefPointer(node.$ref);
      const target = segments === undefined ? undefined : resolveSegments(root, segments);
      if (target?.found === true && isObject(target.value)) targets.add(target.value);
    }
    forEachChild(node, (child) => visit(child));
  };
  visit(root);
  return { targets };
}

/** Whether `node` may move: no location keyword inside and no reference into it. */
function selfContained(node: SchemaObject, facts: Facts): boolean {
  let ok = true;
  const visit = (current: unknown) => {
    if (!ok || !isObject(current)) return;
    if (facts.targets.has(current)) ok = false;
    for (const keyword of Object.keys(current)) if (LOCATION_KEYWORDS.has(keyword)) ok = false;
    forEachChild(current, (child) => visit(child));
  };
  visit(node);
  return ok;
}

/** Number of asserting keywords in the subtree: one function call pays off from two. */
function assertionCount(node: unknown): number {
  if (!isObject(node)) return 0;
  let count = 0;
  for (const keyword of Object.keys(node))
    if (!ANNOTATIONS.has(keyword) && !keyword.startsWith('x-')) count++;
  forEachChild(node, (child) => (count += assertionCount(child)));
  return count;
}

/** Canonical text of a subschema: equal text, equal validation. */
function canonical(node: unknown): string {
  return JSON.stringify(sortKeysDeep(node));
}

export interface SharedSubschemas {
  /** The views, with shared subschemas replaced by `{ $ref: id }`, in the given order. */
  readonly views: JsonSchema[];
  /** The shared schemas, in order of first use (a schema may reference earlier ones). */
  readonly shared: { readonly id: string; readonly schema: SchemaObject }[];
}

/**
 * Moves subschemas that occur at least twice across `views` (and assert at least two things)
 * into shared schemas. The views must use one dialect; ids are numbered in order of first
 * occurrence, so the result depends only on the views.
 */
export function shareSubschemas(views: readonly JsonSchema[]): SharedSubschemas {
  const facts = views.map((view) => (isObject(view) ? collectTargets(view) : undefined));
  const counts = new Map<string, number>();
  const movable = new Map<SchemaObject, string>();
  views.forEach((view, index) => {
    const viewFacts = facts[index];
    if (viewFacts === undefined) return;
    const visit = (node: unknown, keyword: string | undefined) => {
      if (!isObject(node)) return;
      if (
        keyword !== undefined &&
        MOVABLE_UNDER.has(keyword) &&
        assertionCount(node) >= 2 &&
        selfContained(node, viewFacts)
      ) {
        const key = canonical(node);
        movable.set(node, key);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      forEachChild(node, visit);
    };
    visit(view, undefined);
  });
  const ids = new Map<string, string>();
  const shared: { id: string; schema: SchemaObject }[] = [];
  // Bottom-up: a shared schema's own shared parts are already references when it is recorded.
  const rewrite = (view: JsonSchema) =>
    mapSchema(view, (node, { original }) => {
      const key = movable.get(original);
      if (key === undefined || (counts.get(key) ?? 0) < 2) return node;
      let id = ids.get(key);
      if (id === undefined) {
        id = `${SHARED_ID_PREFIX}${ids.size + 1}`;
        ids.set(key, id);
        shared.push({ id, schema: node });
      }
      return { $ref: id };
    });
  return { views: views.map((view) => rewrite(view) as JsonSchema), shared };
}
