/**
 * Turns a schema value into one "shape" the comparers understand, the way Confluent's checker
 * (through the everit loader) sees schemas: one kind per schema (string, number, object, array,
 * enum, const, combined, not, …). A schema object that mixes several facets — `type` plus `enum`,
 * a `$ref` next to `properties`, `type: [a, b]` — becomes a *synthetic* `allOf`/`anyOf` of its
 * facets. Synthetic combinations add no segment to reported paths, so pointers stay real.
 */
import { isObject } from '../common/json-value.js';
import { ComparisonLimitError } from './comparison-problem.js';
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
  | 'not';

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
    string: ['minLength', 'maxLength', 'pattern'],
    number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  };

const COMBINERS: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf']);
const NO_META: SchemaMeta = { hasDefault: false };
/** `$ref` hops followed iteratively; far beyond any real chain, it only stops circles. */
const MAX_REF_HOPS = 10_000;

function metaOf(keywords: { readonly [keyword: string]: unknown }): SchemaMeta {
  return {
    id: keywords['$id'],
    title: keywords['title'],
    description: keywords['description'],
    hasDefault: Object.prototype.hasOwnProperty.call(keywords, 'default'),
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
  if (
    dialect === '2020-12' &&
    ENTRY_WISE_2020_12.has(keyword) &&
    isObject(value) &&
    Object.keys(value).length === 0
  )
    return false;
  return true;
}

function facetsOf(
  keywords: { readonly [keyword: string]: unknown },
  dialect: SchemaDialect,
): string[] {
  const facets: string[] = [];
  if (typeof keywords['$ref'] === 'string') facets.push('ref');
  for (const keyword of ['enum', 'allOf', 'anyOf', 'oneOf', 'not', 'const']) {
    if (keywords[keyword] !== undefined) facets.push(keyword);
  }
  const type = keywords['type'];
  if (typeof type === 'string') facets.push(`type:${type}`);
  else if (Array.isArray(type) && type.length === 1 && typeof type[0] === 'string')
    facets.push(`type:${type[0]}`);
  else if (Array.isArray(type) && type.length > 1) facets.push('types');
  else {
    // No `type`: the keywords present say which kinds of value are constrained.
    for (const kind of ['object', 'array', 'string', 'number'] as const) {
      if (TYPE_KEYWORDS[kind].some((keyword) => constrains(keywords, keyword, dialect)))
        facets.push(`type:${kind}`);
    }
  }
  return facets;
}

/** The shape of a schema node (following `$ref`s). */
export function shapeOf(node: SchemaNode): Shape {
  let current = node;
  for (let hop = 0; hop < MAX_REF_HOPS; hop++) {
    const { value } = current;
    if (value === false) return { kind: 'false', at: current, keywords: {}, meta: NO_META };
    if (!isObject(value)) return { kind: 'empty', at: current, keywords: {}, meta: NO_META };
    if (current.facet !== undefined) return facetShape(current, value, current.facet);
    const facets = facetsOf(value, current.doc.dialect);
    if (facets.length === 0)
      return { kind: 'empty', at: current, keywords: value, meta: metaOf(value) };
    if (facets.length === 1 && facets[0] === 'ref') {
      current = current.doc.resolve(current, value['$ref'] as string);
      continue;
    }
    if (facets.length === 1)
      return { ...facetShape(current, value, facets[0]!), meta: metaOf(value) };
    const indexed = facets.some((facet) => COMBINERS.has(facet));
    return {
      kind: 'combined',
      at: current,
      keywords: value,
      meta: metaOf(value),
      criterion: 'allOf',
      synthetic: true,
      ...(indexed ? { indexed } : {}),
      subschemas: facets.map((facet) => ({ ...current, facet })),
    };
  }
  throw refChainTooLong();
}

function facetShape(
  at: SchemaNode,
  keywords: { readonly [keyword: string]: unknown },
  facet: string,
): Shape {
  const base = { at, keywords, meta: NO_META };
  switch (facet) {
    case 'ref':
      return shapeOf(at.doc.resolve({ ...at, facet: undefined }, keywords['$ref'] as string));
    case 'enum':
      return { ...base, kind: 'enum' };
    case 'const':
      return { ...base, kind: 'const' };
    case 'not':
      return { ...base, kind: 'not' };
    case 'allOf':
    case 'anyOf':
    case 'oneOf': {
      const list = keywords[facet];
      const subschemas = Array.isArray(list) ? list.map((value) => at.doc.child(at, value)) : [];
      return { ...base, kind: 'combined', criterion: facet, synthetic: false, subschemas };
    }
    case 'types': {
      const types = (keywords['type'] as unknown[]).filter(
        (type): type is string => typeof type === 'string',
      );
      return {
        ...base,
        kind: 'combined',
        criterion: 'anyOf',
        synthetic: true,
        subschemas: [...new Set(types)].map((type) => ({ ...at, facet: `type:${type}` })),
      };
    }
    default: {
      const type = facet.slice('type:'.length);
      if (type === 'integer') return { ...base, kind: 'number', integer: true };
      if (type === 'number') return { ...base, kind: 'number', integer: false };
      if (
        type === 'string' ||
        type === 'object' ||
        type === 'array' ||
        type === 'boolean' ||
        type === 'null'
      ) {
        return { ...base, kind: type };
      }
      return { ...base, kind: 'empty' };
    }
  }
}

/** Follows `$ref`-only schemas to the schema they name, so a pair is keyed by what it really is. */
export function followReferences(node: SchemaNode): SchemaNode {
  let current = node;
  for (let hop = 0; hop < MAX_REF_HOPS; hop++) {
    const { value } = current;
    if (current.facet !== undefined || !isObject(value)) return current;
    const facets = facetsOf(value, current.doc.dialect);
    if (facets.length !== 1 || facets[0] !== 'ref') return current;
    current = current.doc.resolve(current, value['$ref'] as string);
  }
  throw refChainTooLong();
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
  return shape.at.doc.child({ ...shape.at, facet: undefined }, value);
}

/** `true` and `{}` (without any keyword that constrains) accept every value. */
export function acceptsEverything(value: unknown, dialect: SchemaDialect = 'draft-07'): boolean {
  if (value === true) return true;
  if (!isObject(value)) return false;
  return facetsOf(value, dialect).length === 0;
}
