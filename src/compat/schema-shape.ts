/**
 * Turns a schema value into one "shape" the comparers understand, the way Confluent's checker
 * (through the everit loader) sees schemas: one kind per schema (string, number, object, array,
 * enum, const, combined, not, …). A schema object that mixes several facets — `type` plus `enum`,
 * a `$ref` next to `properties`, `type: [a, b]` — becomes a *synthetic* `allOf`/`anyOf` of its
 * facets. Synthetic combinations add no segment to reported paths, so pointers stay real.
 */
import { isObject } from '../common/json-value.js';
import { ComparisonLimitError } from './comparison-problem.js';
import type { Reading } from './schema-document.js';
import type { SchemaDialect, SchemaNode } from './schema-document.js';

export type CombinedCriterion = 'allOf' | 'anyOf' | 'oneOf';
export type ShapeKind =
  | 'empty'
  | 'false'
  | 'null'
  | 'boolean'
  | 'string'
  | 'number'
  | 'object'
  | 'array'
  | 'enum'
  | 'const'
  | 'combined'
  | 'not'
  /**
   * Confluent's reading only: a `$ref` whose target is itself only a `$ref`. Its checker follows
   * one reference per comparison, so two of these are never compared further.
   */
  | 'reference';

export interface SchemaMeta {
  readonly id?: unknown;
  readonly title?: unknown;
  readonly description?: unknown;
  readonly hasDefault: boolean;
  readonly default?: unknown;
}

export interface Shape {
  readonly kind: ShapeKind;
  /** Where the keywords come from; children are resolved relative to it. */
  readonly at: SchemaNode;
  /** The schema object's keywords ({} for boolean schemas). */
  readonly keywords: { readonly [keyword: string]: unknown };
  readonly meta: SchemaMeta;
  /** number kind: `type: integer`. */
  readonly integer?: boolean;
  /** combined kind. */
  readonly criterion?: CombinedCriterion;
  readonly subschemas?: readonly SchemaNode[];
  readonly synthetic?: boolean;
  /**
   * A synthetic allOf that Confluent reports with real `allOf/N` segments: a schema object with
   * a combining keyword beside other keywords (`type: number` + `anyOf`) is read as an allOf of
   * its parts, in the order Confluent's loader builds them (enum, combiners, not, const, type).
   */
  readonly indexed?: boolean;
}

const TYPE_KEYWORDS: Readonly<Record<'object' | 'array' | 'string' | 'number', readonly string[]>> =
  {
    object: [
      'properties',
      'required',
      'additionalProperties',
      'patternProperties',
      'dependencies',
      'dependentRequired',
      'dependentSchemas',
      'minProperties',
      'maxProperties',
      'propertyNames',
      'unevaluatedProperties',
    ],
    array: [
      'items',
      'prefixItems',
      'additionalItems',
      'unevaluatedItems',
      'minItems',
      'maxItems',
      'uniqueItems',
      'contains',
      'minContains',
      'maxContains',
    ],
    // `format` too: both Confluent's loader and validators apply it to strings only.
    string: ['minLength', 'maxLength', 'pattern', 'format'],
    number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  };

const COMBINERS: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf']);
const NO_META: SchemaMeta = { hasDefault: false };
/** `$ref` hops followed iteratively; far beyond any real chain, it only stops circles. */
const MAX_REF_HOPS = 10_000;

function metaOf(keywords: { readonly [keyword: string]: unknown }, node: SchemaNode): SchemaMeta {
  const hasDefault =
    Object.prototype.hasOwnProperty.call(keywords, 'default') &&
    // Confluent's 2020-12 loader hands `default: null` on as Java's null: no default at all.
    !(
      keywords['default'] === null &&
      node.doc.reading === 'confluent' &&
      node.doc.dialect === '2020-12'
    );
  return {
    id: keywords['$id'],
    title: keywords['title'],
    description: keywords['description'],
    hasDefault,
    default: keywords['default'],
  };
}

/**
 * Confluent's 2020-12 loader turns each `properties`/`patternProperties` entry into its own
 * constraint, so an empty map constrains nothing there (`{"properties": {}}` is `{}`); its
 * draft-07 loader still reads it as an object schema.
 */
const ENTRY_WISE_2020_12 = new Set(['properties', 'patternProperties']);

function constrains(
  keywords: { readonly [keyword: string]: unknown },
  keyword: string,
  dialect: SchemaDialect,
): boolean {
  const value = keywords[keyword];
  if (value === undefined) return false;
  // Gone from 2019-09/2020-12 (see schema-document.ts): it constrains nothing there.
  if (keyword === 'dependencies' && dialect === '2020-12') return false;
  if (
    dialect === '2020-12' &&
    ENTRY_WISE_2020_12.has(keyword) &&
    isObject(value) &&
    Object.keys(value).length === 0
  )
    return false;
  return true;
}

const TYPED_KINDS = ['array', 'object', 'number', 'string'] as const;

/** The keyword group a `type` consumes (integer and number share one). */
function groupOf(type: string): string {
  return type === 'integer' ? 'number' : type;
}

/**
 * What a schema object is made of, in the order Confluent's loader builds the parts: `$ref`,
 * enum, combiners, not, const, the `type` part, then one untyped part per type whose keywords
 * appear without being that `type`'s (`{"minLength": 1}` is an untyped string part).
 *
 * The two readings differ on two points. Confluent's draft-04/06/07 loader reads a `$ref` alone,
 * ignoring its siblings as those drafts say. And its loader keeps the keywords of another type
 * beside a `type` as an untyped part, so `{"type": "null", "required": ["a"]}` is an allOf of
 * null and "an object needs a" — which by meaning is just null (the object keywords apply to
 * objects only, which `type` excludes), so the `meaning` reading drops them.
 */
function facetsOf(
  keywords: { readonly [keyword: string]: unknown },
  dialect: SchemaDialect,
  reading: Reading,
): string[] {
  const facets: string[] = [];
  if (typeof keywords['$ref'] === 'string') {
    if (reading === 'confluent' && dialect === 'draft-07') return ['ref'];
    facets.push('ref');
  }
  for (const keyword of ['enum', 'allOf', 'anyOf', 'oneOf', 'not', 'const']) {
    if (keywords[keyword] !== undefined) facets.push(keyword);
  }
  const type = keywords['type'];
  const sniff = (consumed: ReadonlySet<string>) => {
    for (const kind of TYPED_KINDS) {
      if (consumed.has(kind)) continue;
      if (TYPE_KEYWORDS[kind].some((keyword) => constrains(keywords, keyword, dialect)))
        facets.push(`type:${kind}`);
    }
  };
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type : undefined;
  const named = (types ?? []).filter((item): item is string => typeof item === 'string');
  if (named.length === 0) sniff(new Set());
  else {
    if (named.length === 1) facets.push(`type:${named[0]!}`);
    else facets.push('types');
    if (reading === 'confluent') sniff(new Set(named.map(groupOf)));
  }
  return facets;
}

/** The shape of a schema node (following `$ref`s). */
export function shapeOf(node: SchemaNode): Shape {
  const current = followReferences(node);
  const { value } = current;
  if (value === false) return { kind: 'false', at: current, keywords: {}, meta: NO_META };
  if (!isObject(value)) return { kind: 'empty', at: current, keywords: {}, meta: NO_META };
  if (current.facet !== undefined) return facetShape(current, value, current.facet);
  const facets = facetsOf(value, current.doc.dialect, current.doc.reading);
  if (facets.length === 0)
    return { kind: 'empty', at: current, keywords: value, meta: metaOf(value, current) };
  if (facets.length === 1)
    return { ...facetShape(current, value, facets[0]!), meta: metaOf(value, current) };
  const indexed = facets.some((facet) => COMBINERS.has(facet));
  return {
    kind: 'combined',
    at: current,
    keywords: value,
    meta: metaOf(value, current),
    criterion: 'allOf',
    synthetic: true,
    ...(indexed ? { indexed } : {}),
    subschemas: facets.map((facet) => ({ ...current, facet })),
  };
}

/**
 * The schema objects a `$ref` chain passes through on the way to its target (policy `evgen`'s
 * reading: each is only a `$ref` by its facets, though it may carry keywords that are no facet,
 * such as `if`/`then`), the start included; empty when `node` is no such `$ref`. Stops at
 * MAX_REF_HOPS hops (followReferences refuses a chain that long).
 */
export function referenceHops(node: SchemaNode): SchemaNode[] {
  const hops: SchemaNode[] = [];
  let current = node;
  while (
    hops.length < MAX_REF_HOPS &&
    isObject(current.value) &&
    typeof current.value['$ref'] === 'string' &&
    isOnlyReference(current)
  ) {
    hops.push(current);
    current = current.doc.resolve(current, current.value['$ref']);
  }
  return hops;
}

/** Facet marking a `$ref` target that is itself only a `$ref` (Confluent's reading). */
const REFERENCE_FACET = 'reference';

function isOnlyReference(node: SchemaNode): boolean {
  const { value } = node;
  if (node.facet !== undefined || !isObject(value)) return false;
  const facets = facetsOf(value, node.doc.dialect, node.doc.reading);
  return facets.length === 1 && facets[0] === 'ref';
}

/**
 * The schema one `$ref` names. Confluent's checker resolves one reference per comparison: a
 * target that is itself only a `$ref` is compared as a reference, never looked through.
 */
function resolveOnce(at: SchemaNode, ref: string): SchemaNode {
  const target = at.doc.resolve(at, ref);
  return at.doc.reading === 'confluent' && isOnlyReference(target)
    ? { ...target, facet: REFERENCE_FACET }
    : target;
}

function facetShape(
  at: SchemaNode,
  keywords: { readonly [keyword: string]: unknown },
  facet: string,
): Shape {
  // Each shape written out in full: spreading a shared base per shape cost an object more.
  switch (facet) {
    case 'ref':
      return shapeOf(resolveOnce(at, keywords['$ref'] as string));
    case REFERENCE_FACET:
      return { at, keywords, meta: NO_META, kind: 'reference' };
    case 'enum':
      return { at, keywords, meta: NO_META, kind: 'enum' };
    case 'const':
      return { at, keywords, meta: NO_META, kind: 'const' };
    case 'not':
      return { at, keywords, meta: NO_META, kind: 'not' };
    case 'allOf':
    case 'anyOf':
    case 'oneOf': {
      const list = keywords[facet];
      const subschemas = Array.isArray(list)
        ? list.flatMap((value) => membersOf(at.doc.child(at, value)))
        : [];
      return {
        at,
        keywords,
        meta: NO_META,
        kind: 'combined',
        criterion: facet,
        synthetic: false,
        subschemas,
      };
    }
    case 'types': {
      const types = (keywords['type'] as unknown[]).filter(
        (type): type is string => typeof type === 'string',
      );
      return {
        at,
        keywords,
        meta: NO_META,
        kind: 'combined',
        criterion: 'anyOf',
        synthetic: true,
        subschemas: [...new Set(types)].map((type) => ({ ...at, facet: `type:${type}` })),
      };
    }
    case 'type:integer':
      return { at, keywords, meta: NO_META, kind: 'number', integer: true };
    case 'type:number':
      return { at, keywords, meta: NO_META, kind: 'number', integer: false };
    case 'type:string':
      return { at, keywords, meta: NO_META, kind: 'string' };
    case 'type:object':
      return { at, keywords, meta: NO_META, kind: 'object' };
    case 'type:array':
      return { at, keywords, meta: NO_META, kind: 'array' };
    case 'type:boolean':
      return { at, keywords, meta: NO_META, kind: 'boolean' };
    case 'type:null':
      return { at, keywords, meta: NO_META, kind: 'null' };
    default:
      return { at, keywords, meta: NO_META, kind: 'empty' };
  }
}

/**
 * Follows `$ref`-only schemas to the schema they name, so a pair is keyed by what it really is
 * (one reference in Confluent's reading, see resolveOnce).
 */
export function followReferences(node: SchemaNode): SchemaNode {
  const { value } = node;
  // Only a schema with a `$ref` can be one (most are not: no lookup for them).
  if (!isObject(value) || typeof value['$ref'] !== 'string') return node;
  const followed = node.doc.referencesFollowed;
  let known = followed.get(value);
  const hit = known?.find(
    (entry) => entry.from.base === node.base && entry.from.facet === node.facet,
  );
  if (hit !== undefined) return hit.to;
  const to = followUncached(node);
  if (known === undefined) followed.set(value, (known = []));
  known.push({ from: node, to });
  return to;
}

function followUncached(node: SchemaNode): SchemaNode {
  if (node.doc.reading === 'confluent')
    return isOnlyReference(node) ? resolveOnce(node, (node.value as { $ref: string }).$ref) : node;
  // The chain referenceHops walks, to the schema past its last hop.
  const hops = referenceHops(node);
  if (hops.length === MAX_REF_HOPS) throw refChainTooLong();
  const last = hops[hops.length - 1];
  return last === undefined ? node : last.doc.resolve(last, (last.value as { $ref: string }).$ref);
}

/**
 * The members a combiner's subschema contributes. Confluent's 2020-12 loader hands each keyword
 * group of a member to the combiner on its own: `anyOf: [{"enum": ["x"], "type": "string"}]` is
 * compared as `anyOf: [{"enum": ["x"]}, {"type": "string"}]`. Its draft-07 loader, and the
 * meaning, keep the member whole (an allOf of its groups).
 */
function membersOf(member: SchemaNode): SchemaNode[] {
  const { value, doc } = member;
  if (doc.reading !== 'confluent' || doc.dialect !== '2020-12' || !isObject(value)) return [member];
  const facets = facetsOf(value, doc.dialect, doc.reading);
  return facets.length > 1 ? facets.map((facet) => ({ ...member, facet })) : [member];
}

/** A `$ref` that only leads to another `$ref`, too many times (or in a circle): never a schema. */
function refChainTooLong(): ComparisonLimitError {
  return new ComparisonLimitError(
    '$ref leads only to other $refs (a chain that long, or a circle of $refs)',
    MAX_REF_HOPS,
    '',
  );
}

/** A subschema of `shape` (e.g. a property's schema). */
export function childOf(shape: Shape, value: unknown): SchemaNode {
  return shape.at.doc.child(shape.at, value);
}

/** How a document is read: the dialect, and whose reading (see facetsOf). */
export interface DocumentReading {
  readonly dialect: SchemaDialect;
  readonly reading: Reading;
}

/**
 * `true` and `{}` (without any keyword that constrains) accept every value. By meaning, an
 * `if` with `then`/`else` constrains too, and so does a 2020-12 `dependencies`, which evgen's
 * validators still apply (Confluent compares neither).
 */
export function acceptsEverything(value: unknown, doc: DocumentReading): boolean {
  if (value === true) return true;
  if (!isObject(value)) return false;
  if (facetsOf(value, doc.dialect, 'meaning').length > 0) return false;
  if (doc.reading === 'confluent') return true;
  const conditional =
    value['if'] !== undefined && (value['then'] !== undefined || value['else'] !== undefined);
  return !conditional && !(doc.dialect === '2020-12' && value['dependencies'] !== undefined);
}
