/**
 * The three views of one version's bundled payload schema that the targets compile:
 *
 * - WRITER (strict): every object schema is closed. Where the schema says nothing about extra
 *   properties, `additionalProperties: false` is added (2020-12 schemas that combine subschemas
 *   get `unevaluatedProperties: false` instead, so properties declared in `allOf` branches stay
 *   allowed). Producers therefore never emit a property the schema does not declare.
 * - READER (tolerant): every `additionalProperties: false` / `unevaluatedProperties: false` is
 *   lifted, so unknown properties are accepted everywhere; required properties, types, enums,
 *   formats and bounds are still enforced.
 * - TYPES: the writer view with every name json-schema-to-typescript derives under our control
 *   (root named `<Event>V<n>Payload`, nested named types prefixed with `<Event>V<n>`) and
 *   code-bearing extension keywords (`tsType`, `tsEnumNames`) removed.
 *
 * The evgen compatibility policy ("writer schema closed → reader schema open") relies on the
 * generated validators behaving exactly like this.
 */
import { CatalogError, pointerSegment } from '../../catalog/catalog-error.js';
import type { JsonSchema } from '../../catalog/model.js';
import { pascalCase } from '../naming.js';
import { isSafeIdentifier, sortKeysDeep } from '../render/safe-code.js';

export type Dialect = 'draft-07' | '2019-09' | '2020-12';

type SchemaObject = Record<string, unknown>;

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The dialect of a bundled schema; a schema without `$schema` is draft-07. */
export function dialectOf(schema: JsonSchema): Dialect {
  const uri = isObject(schema) && typeof schema.$schema === 'string' ? schema.$schema : '';
  if (uri.includes('2020-12')) return '2020-12';
  if (uri.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

const SINGLE = [
  'additionalProperties',
  'additionalItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
];
const MAPS = [
  'properties',
  'patternProperties',
  'definitions',
  '$defs',
  'dependentSchemas',
  'dependencies',
];
const ARRAYS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const COMBINATORS = ['allOf', 'anyOf', 'oneOf'] as const;
/**
 * Subschemas whose properties belong to the parent object: they are closed by the parent
 * (which knows all of them), never on their own.
 */
const PARENT_CLOSED = new Set(['allOf', 'then', 'else', 'dependentSchemas', 'dependencies']);
/**
 * Subschemas that test the instance rather than describe it (`not`, `if`, `contains`,
 * `propertyNames`): closing them would change which values they match, so the writer view
 * leaves them exactly as written.
 */
const TESTS = new Set(['not', 'if', 'contains', 'propertyNames']);

interface NodeContext {
  /** The node as it was before its children were rebuilt (for identity checks). */
  readonly original: SchemaObject;
  /** Keyword under which the node sits (`properties`, `allOf`, …); undefined for the root. */
  readonly parentKeyword: string | undefined;
  /** Its name inside a map keyword (`properties`, `$defs`, …). */
  readonly key: string | undefined;
  /** JSON pointer of the node in the schema given to transformSchema ("" for the root). */
  readonly pointer: string;
}

/**
 * Rebuilds a schema bottom-up; `visit` receives each object subschema (a fresh copy whose
 * children are already rebuilt). Maps are rebuilt with `Object.fromEntries`, so property names
 * like `__proto__` stay ordinary properties.
 */
function transformSchema(
  schema: unknown,
  visit: (node: SchemaObject, context: NodeContext) => SchemaObject,
  skip: ReadonlySet<string> = new Set(),
  parentKeyword?: string,
  key?: string,
  pointer = '',
): unknown {
  if (!isObject(schema)) return schema;
  const copy: SchemaObject = { ...schema };
  const descend = (sub: unknown, keyword: string, name?: string | number) =>
    transformSchema(
      sub,
      visit,
      skip,
      keyword,
      typeof name === 'string' ? name : undefined,
      `${pointer}/${keyword}${name === undefined ? '' : `/${pointerSegment(name)}`}`,
    );
  for (const k of SINGLE) if (isObject(copy[k]) && !skip.has(k)) copy[k] = descend(copy[k], k);
  for (const k of MAPS) {
    const value = copy[k];
    // `dependencies` values may be arrays of names (draft-07): non-objects pass through unchanged.
    if (isObject(value))
      copy[k] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, descend(sub, k, name)]),
      );
  }
  for (const k of [...ARRAYS, 'items']) {
    const value = copy[k];
    if (Array.isArray(value)) copy[k] = value.map((sub, index) => descend(sub, k, index));
    else if (k === 'items' && isObject(value)) copy[k] = descend(value, k);
  }
  return visit(copy, { original: schema, parentKeyword, key, pointer });
}

/** Rebuilds a schema bottom-up with a simpler visitor. */
function mapSchema(
  schema: unknown,
  map: (node: SchemaObject, parentKeyword: string | undefined) => SchemaObject,
): unknown {
  return transformSchema(schema, (node, context) => map(node, context.parentKeyword));
}

function typeIncludesObject(node: SchemaObject): boolean {
  const type = node.type;
  return type === 'object' || (Array.isArray(type) && type.includes('object'));
}

function declaresObject(node: SchemaObject): boolean {
  return typeIncludesObject(node) || isObject(node.properties) || isObject(node.patternProperties);
}

/** Subschemas that add properties to this same object: combinator branches, then/else, dependent schemas. */
function combinatorBranches(node: SchemaObject): SchemaObject[] {
  const branches = COMBINATORS.flatMap((key) =>
    Array.isArray(node[key]) ? (node[key] as unknown[]).filter(isObject) : [],
  );
  for (const key of ['then', 'else'] as const) if (isObject(node[key])) branches.push(node[key]);
  for (const key of ['dependentSchemas', 'dependencies'] as const) {
    if (isObject(node[key])) branches.push(...Object.values(node[key]).filter(isObject));
  }
  return branches;
}

/** Resolves a local `#/…` pointer inside the root schema. */
function resolveLocal(root: unknown, ref: string): SchemaObject | undefined {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node)) return undefined;
    node = node[segment];
  }
  return isObject(node) ? node : undefined;
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
  const parts = [...combinatorBranches(node)];
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
 * Pointers (`#/definitions/x`) of schemas that some other schema extends: referenced from an
 * `allOf`/`then`/`else`/dependent-schema branch, from an `anyOf`/`oneOf` branch of a parent with
 * its own properties, or by a `$ref` with sibling properties.
 */
function extendedDefinitions(root: unknown): Set<string> {
  const bases = new Set<string>();
  mapSchema(root, (node) => {
    const ownProperties = isObject(node.properties) || isObject(node.patternProperties);
    const all = combinatorBranches(node);
    const alternatives = (['anyOf', 'oneOf'] as const).flatMap((key) =>
      Array.isArray(node[key]) ? (node[key] as unknown[]).filter(isObject) : [],
    );
    const extending = ownProperties ? all : all.filter((branch) => !alternatives.includes(branch));
    for (const branch of extending) if (typeof branch.$ref === 'string') bases.add(branch.$ref);
    if (typeof node.$ref === 'string' && (ownProperties || all.length > 0)) bases.add(node.$ref);
    return node;
  });
  return bases;
}

/** The strict writer view (see the file comment). */
export function writerSchema(bundled: JsonSchema): JsonSchema {
  if (!isObject(bundled)) return bundled;
  const dialect = dialectOf(bundled);
  // anyOf/oneOf branches under a parent that declares properties itself are closed by that
  // parent (like allOf branches): mark them first, and drop the mark at the end.
  const marked = mapSchema(bundled, (node) => {
    if (!isObject(node.properties) && !isObject(node.patternProperties)) return node;
    const copy = { ...node };
    for (const key of ['anyOf', 'oneOf'] as const) {
      if (Array.isArray(copy[key]))
        copy[key] = (copy[key] as unknown[]).map((b) =>
          isObject(b) ? { ...b, [BRANCH_MARK]: true } : b,
        );
    }
    return copy;
  }) as SchemaObject;
  const open = new Set<SchemaObject>();
  // Definitions other schemas extend stay open: closing them would reject the extension's properties.
  for (const ref of extendedDefinitions(marked)) {
    const target = resolveLocal(marked, ref);
    if (target !== undefined) open.add(target);
  }
  const close = (
    node: SchemaObject,
    parentKeyword: string | undefined,
    original: SchemaObject,
  ): SchemaObject => {
    if ('additionalProperties' in node || 'unevaluatedProperties' in node) return node;
    if (open.has(original)) return node;
    // allOf, then/else, dependent-schema (and marked anyOf/oneOf) branches are closed by their
    // parent, which knows every branch's properties.
    if ((parentKeyword !== undefined && PARENT_CLOSED.has(parentKeyword)) || BRANCH_MARK in node)
      return node;
    const hasCombinator =
      combinatorBranches(node).length > 0 ||
      (typeof node.$ref === 'string' && dialect !== 'draft-07');
    if (!hasCombinator)
      return declaresObject(node) ? { ...node, additionalProperties: false } : node;
    if (dialect !== 'draft-07') {
      return declaresObject(node) || combinatorBranches(node).some(declaresObject)
        ? { ...node, unevaluatedProperties: false }
        : node;
    }
    const names = combinedPropertyNames(marked, original);
    if (
      names === undefined ||
      (!declaresObject(node) && !combinatorBranches(node).some(declaresObject))
    )
      return node;
    const own = isObject(node.properties) ? node.properties : {};
    const added = [...names]
      .sort()
      .filter((name) => !Object.hasOwn(own, name))
      .map((name) => [name, true] as const);
    const properties: SchemaObject = Object.fromEntries([...Object.entries(own), ...added]);
    return { ...node, properties, additionalProperties: false };
  };
  const result = transformSchema(
    marked,
    (node, { parentKeyword, original }) => close(node, parentKeyword, original),
    TESTS,
  ) as JsonSchema;
  return mapSchema(result, (node) => {
    if (!(BRANCH_MARK in node)) return node;
    const { [BRANCH_MARK]: _mark, ...rest } = node;
    return rest;
  }) as JsonSchema;
}

/** Marks anyOf/oneOf branches under a parent with properties; removed before returning. */
const BRANCH_MARK = '\u0000evgen-open-branch';

/** The tolerant reader view (see the file comment). */
export function readerSchema(bundled: JsonSchema): JsonSchema {
  return mapSchema(bundled, (node) => {
    const copy = { ...node };
    if (copy.additionalProperties === false) delete copy.additionalProperties;
    if (copy.unevaluatedProperties === false) delete copy.unevaluatedProperties;
    return copy;
  }) as JsonSchema;
}

/** Keywords json-schema-to-typescript copies into output verbatim: never let catalog text through them. */
const CODE_BEARING_KEYWORDS = ['tsType', 'tsEnumNames', 'tsName', '$id', 'id'];

/**
 * The view json-schema-to-typescript compiles: the writer view, with the root titled `rootName`
 * and every other named schema (a `title`, or an entry of `definitions`/`$defs`) titled
 * `<prefix><PascalCaseName>`. Two different schemas that would get the same name are reported.
 */
export function typesSchema(
  bundled: JsonSchema,
  rootName: string,
  prefix: string,
  source: string,
): JsonSchema {
  const writer = writerSchema(bundled);
  if (!isObject(writer)) return writer;
  // Type name → the first schema that claimed it (its body, to tell a re-use from a clash, and where it is).
  const claimed = new Map<string, { body: string; pointer: string }>([
    [rootName, { body: '<root>', pointer: '' }],
  ]);
  const claim = (name: string, node: SchemaObject, label: string, pointer: string): string => {
    const body = JSON.stringify(sortKeysDeep({ ...node, title: undefined }));
    const previous = claimed.get(name);
    if (previous !== undefined && previous.body !== body) {
      throw new CatalogError([
        {
          code: 'type-name-collision',
          file: source,
          pointer,
          message: `this schema and the one at ${previous.pointer === '' ? 'the root' : `#${previous.pointer}`} would both generate the TypeScript type ${name} (${label})`,
          hint: 'give one of them a different "title" (or rename its definition); evgen never renames silently',
        },
      ]);
    }
    if (previous === undefined) claimed.set(name, { body, pointer });
    return name;
  };
  const named = (raw: string, node: SchemaObject, pointer: string): string | undefined => {
    const name = `${prefix}${pascalCase(raw)}`;
    return pascalCase(raw) === '' || !isSafeIdentifier(name)
      ? undefined
      : claim(name, node, `from ${JSON.stringify(raw)}`, pointer);
  };
  const rename = (
    node: SchemaObject,
    parentKeyword: string | undefined,
    key: string | undefined,
    pointer: string,
  ): SchemaObject => {
    const copy = { ...node };
    for (const keyword of CODE_BEARING_KEYWORDS) delete copy[keyword];
    const raw =
      typeof copy.title === 'string' && copy.title.trim() !== ''
        ? copy.title
        : parentKeyword === 'definitions' || parentKeyword === '$defs'
          ? key
          : undefined;
    delete copy.title;
    const name = raw === undefined ? undefined : named(raw, copy, pointer);
    if (name !== undefined) copy.title = name;
    return copy;
  };
  const result = transformSchema(writer, (node, { parentKeyword, key, pointer }) => {
    // json-schema-to-typescript knows tuples only in draft-07 form (`items: [...]` + `additionalItems`).
    if (Array.isArray(node.prefixItems)) {
      const rest = node.items;
      node.items = node.prefixItems;
      delete node.prefixItems;
      if (rest === undefined) delete node.additionalItems;
      else node.additionalItems = rest;
    }
    if (parentKeyword === undefined) {
      for (const keyword of CODE_BEARING_KEYWORDS) delete node[keyword];
      return node;
    }
    return rename(node, parentKeyword, key, pointer);
  }) as SchemaObject;
  // The root: its own title becomes part of the description, its name is fixed.
  const description = [
    typeof writer.title === 'string' ? writer.title : undefined,
    typeof writer.description === 'string' ? writer.description : undefined,
  ]
    .filter((part): part is string => part !== undefined && part.trim() !== '')
    .join(': ');
  return { ...result, title: rootName, ...(description !== '' ? { description } : {}) };
}
