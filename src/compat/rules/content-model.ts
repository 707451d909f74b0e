/**
 * Open, closed and partially open content models of objects and arrays. An *open* model accepts
 * any extra property (item) unchecked; a *closed* one none; a *partially open* one accepts extras
 * that match a schema (`patternProperties`, `additionalProperties: {…}`, `additionalItems: {…}`,
 * `unevaluated…: {…}`). Whether a removed or added property is compatible depends on it.
 */
import { isObject } from '../../common/json-value.js';
import { acceptsEverything, type Shape } from '../schema-shape.js';

/** What the schema says about extras beyond the declared properties/items. */
export interface OpenEnd {
  /** The keyword carrying it (`additionalProperties`, `items` in 2020-12 tuples, …). */
  readonly keyword: string;
  readonly present: boolean;
  /** False only for `false`. */
  readonly permits: boolean;
  /** A constraining schema; undefined for absent/`true`/`{}`/`false`. */
  readonly schema: unknown;
}

export function openEnd(shape: Shape, keyword: string): OpenEnd {
  const value = keyword === NO_REST ? undefined : shape.keywords[keyword];
  return {
    keyword,
    present: value !== undefined,
    permits: value !== false,
    schema:
      value === undefined || value === false || acceptsEverything(value, shape.at.doc)
        ? undefined
        : value,
  };
}

/**
 * 2020-12 tuples put the "rest" schema in `items`; draft-07 in `additionalItems`. In 2020-12 a
 * boolean `items` without a tuple is the rest of an empty tuple (`false`: no items at all). In
 * draft-07 `prefixItems` is an unknown keyword and `items` (schema or boolean) applies to every item.
 */
export function arrayRestKeyword(shape: Shape): string {
  const { keywords } = shape;
  // By meaning, `additionalItems` counts only after an `items` array: draft-07 validators ignore
  // it beside `items: {…}` or alone, 2020-12 ones always (`{"additionalItems": false}` accepts
  // `[1, 2]`). Confluent's loader reads it anyway.
  const meaning = shape.at.doc.reading !== 'confluent';
  if (shape.at.doc.dialect !== '2020-12')
    return meaning && !Array.isArray(keywords['items']) ? NO_REST : 'additionalItems';
  if (Array.isArray(keywords['prefixItems'])) return 'items';
  if (
    typeof keywords['items'] === 'boolean' &&
    (meaning || keywords['additionalItems'] === undefined)
  )
    return 'items';
  return meaning ? NO_REST : 'additionalItems';
}

/** A keyword name no schema's rest is read from: the rest is open (see arrayRestKeyword). */
const NO_REST = '';

function isOpen(
  shape: Shape,
  rest: OpenEnd,
  unevaluatedKeyword: string,
  patterns: number,
): boolean {
  if (patterns > 0 || !rest.permits || rest.schema !== undefined) return false;
  const unevaluated = shape.keywords[unevaluatedKeyword];
  return unevaluated === undefined || acceptsEverything(unevaluated, shape.at.doc);
}

/** The schema an extra must match when the model is partially open (undefined: none/closed). */
function partialSchema(shape: Shape, rest: OpenEnd, unevaluatedKeyword: string): unknown {
  if (rest.schema !== undefined) return rest.schema;
  const unevaluated = shape.keywords[unevaluatedKeyword];
  if (
    !rest.present &&
    unevaluated !== undefined &&
    unevaluated !== false &&
    !acceptsEverything(unevaluated, shape.at.doc)
  )
    return unevaluated;
  return undefined;
}

function patternEntries(shape: Shape): [string, unknown][] {
  const patterns = shape.keywords['patternProperties'];
  return isObject(patterns) ? Object.entries(patterns) : [];
}

const regexCache = new Map<string, RegExp | null>();
/** ECMA-262 regex as JSON Schema specifies; an invalid pattern matches nothing. */
export function patternMatches(pattern: string, key: string): boolean {
  let regex = regexCache.get(pattern);
  if (regex === undefined) {
    try {
      regex = new RegExp(pattern, 'u');
    } catch {
      try {
        regex = new RegExp(pattern);
      } catch {
        regex = null;
      }
    }
    regexCache.set(pattern, regex);
  }
  return regex !== null && regex.test(key);
}

export function isOpenObject(shape: Shape): boolean {
  return isOpen(
    shape,
    openEnd(shape, 'additionalProperties'),
    'unevaluatedProperties',
    patternEntries(shape).length,
  );
}

export function objectExtraSchema(shape: Shape, key: string): unknown {
  for (const [pattern, schema] of patternEntries(shape)) {
    if (patternMatches(pattern, key)) return schema;
  }
  return partialSchema(shape, openEnd(shape, 'additionalProperties'), 'unevaluatedProperties');
}

export function isOpenArray(shape: Shape): boolean {
  return isOpen(shape, openEnd(shape, arrayRestKeyword(shape)), 'unevaluatedItems', 0);
}

export function arrayExtraSchema(shape: Shape): unknown {
  return partialSchema(shape, openEnd(shape, arrayRestKeyword(shape)), 'unevaluatedItems');
}
