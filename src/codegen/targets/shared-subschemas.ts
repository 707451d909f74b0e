/**
 * Makes identical subschemas of one event's validator views (writer and reader of every
 * version) compile to one function instead of one copy per view. ajv compiles every `$ref`
 * target once per instance (`inlineRefs: false`), so a subschema moved into a shared schema with
 * its own id, and referenced from every place it occurred, is in the event module once.
 *
 * What moves:
 *
 * - every schema a local `$ref` points to (a bundled `definitions` entry such as a shared
 *   `Money`), and the `$ref`s then name the shared id: the writer views of all versions carry
 *   their own copy of each definition, and so did the module, once per view;
 * - values of `properties`, `patternProperties`, `items`, `prefixItems` and `additionalItems`
 *   that occur at least twice (and assert at least SHARED_FROM_ASSERTIONS things): they validate
 *   another instance (a property value, an array element), so the parent's evaluated-property
 *   tracking (`unevaluatedProperties`) is unaffected.
 *
 * A subschema moves only when it means the same thing anywhere: no identifier keyword inside,
 * and every `$ref` inside leads (transitively, without cycles) to a subschema that moves too, so
 * it is rewritten to that subschema's shared id. Views that use `unevaluatedProperties` or
 * `unevaluatedItems` keep their `$ref`s as written (evaluation then crosses references). Errors
 * keep their instance path, keyword, parameters and message; only ajv's `schemaPath` differs.
 */
import type { JsonSchema } from '../../catalog/model.js';
import { parseRefPointer, resolveSegments } from '../../common/json-pointer.js';
import { isObject } from '../../common/json-value.js';
import { mapSchema, subschemasOf, walkSchema, type SchemaObject } from '../../schema/walk.js';
import { sortKeysDeep } from '../render/safe-code.js';
import { ANNOTATION_KEYWORDS } from './without-annotations.js';

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
/** Positions where a schema is only a reference target: replacing it by a `$ref` changes nothing. */
const DEFINITIONS = new Set(['definitions', '$defs']);
/** Keywords that name or resolve locations (`$ref` is handled on its own). */
const LOCATION_KEYWORDS = new Set([
  '$id',
  'id',
  '$anchor',
  '$dynamicAnchor',
  '$dynamicRef',
  '$recursiveAnchor',
  '$recursiveRef',
  '$schema',
]);
/** Keywords after which `$ref` targets are left where they are. */
const UNEVALUATED = new Set(['unevaluatedProperties', 'unevaluatedItems']);
/**
 * How many asserting keywords a repeated subschema needs to be shared. A shared subschema is a
 * function call at every use: for a leaf of two assertions (`{ type, format }`, `{ type, enum }`)
 * the call site is as long as the inlined checks, so sharing saved no bytes and each call cost
 * time on every message (the generated reader of order.OrderCreated v2: 1.26× the time of ajv's
 * own inlined code with leaves of two shared, 1.09× with them inlined).
 */
const SHARED_FROM_ASSERTIONS = 3;
/** Number of asserting keywords in the subtree (annotations assert nothing). */
function assertionCount(node: unknown): number {
  if (!isObject(node)) return 0;
  let count = 0;
  for (const keyword of Object.keys(node))
    if (!ANNOTATION_KEYWORDS.has(keyword) && !keyword.startsWith('x-')) count++;
  for (const { value } of subschemasOf(node)) count += assertionCount(value);
  return count;
}

/**
 * Canonical keys of one view's subschemas: equal key, equal validation anywhere. A key is the
 * JSON (sorted keys) of the node with each direct object subschema replaced by the number of its
 * own key, and a `$ref` by the number of its target's key; numbers are shared by all views.
 * Undefined for a subschema that cannot move.
 */
class ViewKeys {
  private readonly keys = new Map<SchemaObject, string | undefined>();
  private readonly inProgress = new Set<SchemaObject>();
  /** Schema objects of the view (a `$ref` may only lead to one of these). */
  private readonly nodes = new Set<SchemaObject>();
  /** `$ref` holders and the schema object each leads to. */
  readonly refTargets = new Map<SchemaObject, SchemaObject>();
  private readonly targets = new Set<SchemaObject>();
  private readonly followsRefs: boolean;

  constructor(
    private readonly root: SchemaObject,
    private readonly numbers: Map<string, number>,
  ) {
    let unevaluated = false;
    walkSchema(root, (node) => {
      this.nodes.add(node);
      if (Object.keys(node).some((keyword) => UNEVALUATED.has(keyword))) unevaluated = true;
    });
    this.followsRefs = !unevaluated;
    if (!this.followsRefs) return;
    walkSchema(root, (node) => {
      if (typeof node.$ref !== 'string') return;
      const segments = parseRefPointer(node.$ref);
      const target = segments === undefined ? undefined : resolveSegments(root, segments);
      if (target?.found === true && isObject(target.value) && this.nodes.has(target.value))
        this.refTargets.set(node, target.value);
    });
    for (const target of this.refTargets.values()) this.targets.add(target);
  }

  /** Whether some `$ref` of the view leads to `node`. */
  isRefTarget(node: SchemaObject): boolean {
    return this.targets.has(node);
  }

  private number(key: string): number {
    let number = this.numbers.get(key);
    if (number === undefined) {
      number = this.numbers.size;
      this.numbers.set(key, number);
    }
    return number;
  }

  keyOf(node: SchemaObject): string | undefined {
    if (this.keys.has(node)) return this.keys.get(node);
    // A cycle (a definition reaching itself) cannot be written as one shared schema per node.
    if (this.inProgress.has(node)) return undefined;
    this.inProgress.add(node);
    const key = this.computeKey(node);
    this.inProgress.delete(node);
    this.keys.set(node, key);
    return key;
  }

  private computeKey(node: SchemaObject): string | undefined {
    if (Object.keys(node).some((keyword) => LOCATION_KEYWORDS.has(keyword))) return undefined;
    const copy: SchemaObject = { ...node };
    if ('$ref' in node) {
      const target = this.refTargets.get(node);
      const targetKey = target === undefined ? undefined : this.keyOf(target);
      if (targetKey === undefined) return undefined;
      copy.$ref = `\u0000${this.number(targetKey)}`;
    }
    // Containers are copied before a child is replaced: the view itself stays untouched.
    const copied = new Set<string>();
    for (const { keyword, key, value } of subschemasOf(node)) {
      if (!isObject(value)) continue;
      const childKey = this.keyOf(value);
      if (childKey === undefined) return undefined;
      // A string is never a schema, so the placeholder cannot equal a subschema as written.
      const placeholder = `\u0000${this.number(childKey)}`;
      if (key === undefined) {
        copy[keyword] = placeholder;
        continue;
      }
      if (!copied.has(keyword)) {
        const container = copy[keyword];
        copy[keyword] = Array.isArray(container)
          ? [...(container as unknown[])]
          : { ...(container as SchemaObject) };
        copied.add(keyword);
      }
      (copy[keyword] as Record<string | number, unknown>)[key] = placeholder;
    }
    return JSON.stringify(sortKeysDeep(copy));
  }
}

export interface SharedSubschemas {
  /** The views, with shared subschemas replaced by `{ $ref: id }`, in the given order. */
  readonly views: JsonSchema[];
  /** The shared schemas, in order of first use (they may reference each other). */
  readonly shared: { readonly id: string; readonly schema: SchemaObject }[];
}

/**
 * Moves reference targets, and subschemas that occur at least twice across `views` (and assert
 * at least SHARED_FROM_ASSERTIONS things), into shared schemas. The views must use one dialect;
 * ids are numbered in order of first use, so the result depends only on the views.
 */
export function shareSubschemas(views: readonly JsonSchema[]): SharedSubschemas {
  const numbers = new Map<string, number>();
  const viewKeys = views.map((view) => (isObject(view) ? new ViewKeys(view, numbers) : undefined));
  // How often each movable property/item subschema occurs across all views.
  const counts = new Map<string, number>();
  views.forEach((view, index) => {
    const keys = viewKeys[index];
    if (keys === undefined) return;
    walkSchema(view, (node, { keyword }) => {
      if (
        keyword === undefined ||
        !MOVABLE_UNDER.has(keyword) ||
        assertionCount(node) < SHARED_FROM_ASSERTIONS
      )
        return;
      const key = keys.keyOf(node);
      if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
    });
  });

  const ids = new Map<string, string>();
  const contents = new Map<string, SchemaObject>();
  const idOf = (key: string) => {
    let id = ids.get(key);
    if (id === undefined) {
      id = `${SHARED_ID_PREFIX}${ids.size + 1}`;
      ids.set(key, id);
    }
    return id;
  };
  // Bottom-up: a shared schema's own shared parts are already references when it is recorded.
  const rewrite = (view: JsonSchema, keys: ViewKeys) =>
    mapSchema(view, (node, { original, keyword }) => {
      let result = node;
      const target = keys.refTargets.get(original);
      const targetKey = target === undefined ? undefined : keys.keyOf(target);
      if (targetKey !== undefined) result = { ...result, $ref: idOf(targetKey) };
      const key = keys.keyOf(original);
      if (key === undefined) return result;
      const repeated =
        keyword !== undefined &&
        MOVABLE_UNDER.has(keyword) &&
        (counts.get(key) ?? 0) >= 2 &&
        assertionCount(original) >= SHARED_FROM_ASSERTIONS;
      const referenced = keys.isRefTarget(original);
      if (!repeated && !referenced) return result;
      const id = idOf(key);
      if (!contents.has(key)) contents.set(key, result);
      // A reference target elsewhere (an `allOf` branch, the root) also stays where it is.
      const replaceable =
        keyword !== undefined && (MOVABLE_UNDER.has(keyword) || DEFINITIONS.has(keyword));
      return replaceable ? { $ref: id } : result;
    });
  const rewritten = views.map((view, index) => {
    const keys = viewKeys[index];
    return keys === undefined ? view : (rewrite(view, keys) as JsonSchema);
  });
  const shared = [...ids].map(([key, id]) => {
    const schema = contents.get(key);
    if (schema === undefined) throw new Error(`shared subschema ${id} was referenced but not seen`);
    return { id, schema };
  });
  return { views: rewritten, shared };
}
