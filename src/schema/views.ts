/**
 * The two views of a payload schema that evgen's promise rests on, derived in this one module for
 * both the compatibility checker (which judges them) and the generated validators (which enforce
 * them):
 *
 * - WRITER (strict): every object schema is closed. Where the schema says nothing about extra
 *   properties, `additionalProperties: false` is added (2019-09/2020-12 schemas that combine
 *   subschemas get `unevaluatedProperties: false` instead, so properties declared in `allOf`
 *   branches stay allowed; draft-07 ones are closed over the names all their branches declare).
 *   Producers therefore never emit a property the schema does not declare.
 * - READER (tolerant): every `additionalProperties: false` / `unevaluatedProperties: false` is
 *   lifted, so unknown properties are accepted; required properties, types, enums, formats and
 *   bounds are still enforced.
 *
 * The invariant: whatever the writer view accepts, the reader view accepts. Closing may only
 * narrow and lifting may only widen, so both views change a subschema only where accepting less
 * (or more) there makes the whole schema accept less (or more):
 *
 * - `not`, `if`, `contains` and `propertyNames` subschemas test the instance rather than describe
 *   it: closing or opening them would flip or shift what they match (lifting inside `not` makes the
 *   `not` reject more). Both views keep them, and every definition they reference, as written.
 * - `oneOf` means "exactly one": opening its branches can make a second branch match, and closing
 *   them can make a branch stop matching so another one is the only match. The writer keeps
 *   `oneOf` over its closed branches; the reader turns it into `anyOf` over its open branches, so
 *   a payload the writer sent (matching one closed branch, hence that branch opened) always passes.
 */
import { parseRefPointer, resolveSegments } from '../common/json-pointer.js';
import { compareStrings, isObject } from '../common/json-value.js';
import { mapSchema, walkSchema, type SchemaObject, type SchemaPosition } from './walk.js';

export type Dialect = 'draft-07' | '2019-09' | '2020-12';

/** The dialect of a bundled schema; a schema without `$schema` is draft-07. */
export function dialectOf(schema: unknown): Dialect {
  const uri = isObject(schema) && typeof schema.$schema === 'string' ? schema.$schema : '';
  if (uri.includes('2020-12')) return '2020-12';
  if (uri.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/** Subschemas that test the instance rather than describe it (see the file comment). */
const TESTS: ReadonlySet<string> = new Set(['not', 'if', 'contains', 'propertyNames']);
const COMBINATORS = ['allOf', 'anyOf', 'oneOf'] as const;
/**
 * Subschemas whose properties belong to the parent object: they are closed by the parent
 * (which knows all of them), never on their own.
 */
const PARENT_CLOSED: ReadonlySet<string> = new Set([
  'allOf',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
]);

/** The schema object a local `$ref` points to inside `root`. */
function resolveLocal(root: unknown, ref: string): SchemaObject | undefined {
  const segments = parseRefPointer(ref);
  if (segments === undefined) return undefined;
  const target = resolveSegments(root, segments);
  return target.found && isObject(target.value) ? target.value : undefined;
}

/**
 * Schema objects both views keep as written: subschemas under a test keyword, and every schema a
 * `$ref` inside one of those leads to (followed transitively).
 */
function keptAsWritten(root: SchemaObject): Set<SchemaObject> {
  const kept = new Set<SchemaObject>();
  const keep = (schema: unknown) => {
    walkSchema(schema, (node) => {
      if (kept.has(node)) return;
      kept.add(node);
      const target = typeof node.$ref === 'string' ? resolveLocal(root, node.$ref) : undefined;
      if (target !== undefined && !kept.has(target)) keep(target);
    });
  };
  walkSchema(root, (node, { keyword }) => {
    if (keyword !== undefined && TESTS.has(keyword)) keep(node);
  });
  return kept;
}

function keepFilter(root: SchemaObject) {
  const kept = keptAsWritten(root);
  return (node: SchemaObject, position: SchemaPosition) =>
    kept.has(node) || (position.keyword !== undefined && TESTS.has(position.keyword));
}

function typeIncludesObject(node: SchemaObject): boolean {
  const type = node.type;
  return type === 'object' || (Array.isArray(type) && type.includes('object'));
}

function declaresObject(node: SchemaObject): boolean {
  return typeIncludesObject(node) || isObject(node.properties) || isObject(node.patternProperties);
}

function hasOwnProperties(node: SchemaObject): boolean {
  return isObject(node.properties) || isObject(node.patternProperties);
}

/** Keywords whose subschemas add properties to the same object (see combinatorBranches). */
const BRANCH_KEYWORDS = [...COMBINATORS, 'then', 'else', 'dependentSchemas', 'dependencies'];
const NO_BRANCHES: readonly SchemaObject[] = [];

/** Subschemas that add properties to this same object: combinator branches, then/else, dependent schemas. */
function combinatorBranches(node: SchemaObject): readonly SchemaObject[] {
  // Most nodes have none of these keywords: no lists built for them (views ask per node).
  if (!BRANCH_KEYWORDS.some((key) => node[key] !== undefined)) return NO_BRANCHES;
  const branches = COMBINATORS.flatMap((key) =>
    Array.isArray(node[key]) ? (node[key] as unknown[]).filter(isObject) : [],
  );
  for (const key of ['then', 'else'] as const) if (isObject(node[key])) branches.push(node[key]);
  for (const key of ['dependentSchemas', 'dependencies'] as const) {
    if (isObject(node[key])) branches.push(...Object.values(node[key]).filter(isObject));
  }
  return branches;
}

/**
 * Property names a draft-07 combined schema may carry: its own plus those of its branches
 * (following local `$ref`s and nested combinators). Undefined when it cannot be known
 * statically (a branch with `patternProperties`, an open map, or an unresolvable reference).
 */
function combinedPropertyNames(
  root: unknown,
  node: SchemaObject,
  seen = new Set<SchemaObject>(),
): Set<string> | undefined {
  if (seen.has(node)) return new Set();
  seen.add(node);
  const names = new Set<string>(isObject(node.properties) ? Object.keys(node.properties) : []);
  if (node.patternProperties !== undefined) return undefined;
  if (node.additionalProperties !== undefined && node.additionalProperties !== false)
    return undefined;
  const parts: SchemaObject[] = [...combinatorBranches(node)];
  if (typeof node.$ref === 'string') {
    const target = resolveLocal(root, node.$ref);
    if (target === undefined) return undefined;
    parts.push(target);
  }
  for (const part of parts) {
    const inner = combinedPropertyNames(root, part, seen);
    if (inner === undefined) return undefined;
    for (const name of inner) names.add(name);
  }
  return names;
}

/**
 * Schemas that some other schema extends: referenced from an `allOf`/`then`/`else`/dependent-schema
 * branch, from an `anyOf`/`oneOf` branch of a parent with its own properties, or by a `$ref` with
 * sibling properties. Closing them would reject the extension's properties, so they stay open.
 */
function extendedSchemas(root: SchemaObject): Set<SchemaObject> {
  const refs = new Set<string>();
  walkSchema(root, (node) => {
    const all = combinatorBranches(node);
    if (all.length === 0 && typeof node.$ref !== 'string') return;
    const alternatives = (['anyOf', 'oneOf'] as const).flatMap((key) =>
      Array.isArray(node[key]) ? (node[key] as unknown[]).filter(isObject) : [],
    );
    const extending = hasOwnProperties(node)
      ? all
      : all.filter((branch) => !alternatives.includes(branch));
    for (const branch of extending) if (typeof branch.$ref === 'string') refs.add(branch.$ref);
    if (typeof node.$ref === 'string' && (hasOwnProperties(node) || all.length > 0))
      refs.add(node.$ref);
  });
  const extended = new Set<SchemaObject>();
  for (const ref of refs) {
    const target = resolveLocal(root, ref);
    if (target !== undefined) extended.add(target);
  }
  return extended;
}

/** The strict writer view (see the file comment). */
export function writerSchema<S>(schema: S): S {
  if (!isObject(schema)) return schema;
  const dialect = dialectOf(schema);
  const extended = extendedSchemas(schema);
  const close = (
    node: SchemaObject,
    position: SchemaPosition & { readonly original: SchemaObject },
  ): SchemaObject => {
    if ('additionalProperties' in node || 'unevaluatedProperties' in node) return node;
    if (extended.has(position.original)) return node;
    const { keyword, parent } = position;
    // allOf, then/else and dependent-schema branches are closed by their parent, which knows
    // every branch's properties; so are anyOf/oneOf branches of a parent with properties.
    if (keyword !== undefined && PARENT_CLOSED.has(keyword)) return node;
    if (
      (keyword === 'anyOf' || keyword === 'oneOf') &&
      parent !== undefined &&
      hasOwnProperties(parent)
    )
      return node;
    const hasCombinator =
      combinatorBranches(node).length > 0 ||
      (typeof node.$ref === 'string' && dialect !== 'draft-07');
    // `node` is mapSchema's fresh copy: closed in place (the key goes last, as in a copy).
    if (!hasCombinator) {
      if (declaresObject(node)) node.additionalProperties = false;
      return node;
    }
    const branchesDeclareObjects = combinatorBranches(node).some(declaresObject);
    if (dialect !== 'draft-07') {
      return declaresObject(node) || branchesDeclareObjects
        ? { ...node, unevaluatedProperties: false }
        : node;
    }
    const names = combinedPropertyNames(schema, position.original);
    if (names === undefined || (!declaresObject(node) && !branchesDeclareObjects)) return node;
    const own = isObject(node.properties) ? node.properties : {};
    const added = [...names]
      .sort(compareStrings)
      .filter((name) => !Object.hasOwn(own, name))
      .map((name) => [name, true] as const);
    const properties: SchemaObject = Object.fromEntries([...Object.entries(own), ...added]);
    return { ...node, properties, additionalProperties: false };
  };
  return mapSchema(schema, close, { keepAsWritten: keepFilter(schema) }) as S;
}

/** The tolerant reader view (see the file comment). */
export function readerSchema<S>(schema: S): S {
  if (!isObject(schema)) return schema;
  // `node` is mapSchema's fresh copy: opened in place.
  const open = (copy: SchemaObject): SchemaObject => {
    if (copy.additionalProperties === false) delete copy.additionalProperties;
    if (copy.unevaluatedProperties === false) delete copy.unevaluatedProperties;
    if (!Array.isArray(copy.oneOf)) return copy;
    // "Exactly one" becomes "at least one" (see the file comment); keys keep their order.
    if (copy.anyOf === undefined)
      return Object.fromEntries(
        Object.entries(copy).map(([key, value]) => [key === 'oneOf' ? 'anyOf' : key, value]),
      );
    const { oneOf, ...rest } = copy;
    return {
      ...rest,
      allOf: [...(Array.isArray(rest.allOf) ? (rest.allOf as unknown[]) : []), { anyOf: oneOf }],
    };
  };
  return mapSchema(schema, open, { keepAsWritten: keepFilter(schema) }) as S;
}
