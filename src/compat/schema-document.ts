/**
 * One JSON Schema document as the difference engine sees it: the parsed root plus `$ref`
 * resolution. References resolve inside the document only (local JSON pointers, `$anchor`s and
 * embedded `$id` resources, as produced by the catalog's bundler); evgen compares bundled,
 * self-contained schemas, so an unresolvable reference is bad input, never a silent pass.
 */
import { unescapeSegment } from '../common/json-pointer.js';
import { isObject } from '../common/json-value.js';
import { mapSchema } from '../schema/walk.js';

/**
 * How keywords are read where Confluent's checker and the meaning of a schema part ways:
 * `confluent` reproduces Confluent Schema Registry (it ignores `patternProperties`, the draft-04
 * boolean `exclusiveMinimum`/`exclusiveMaximum`, and a Kafka Connect `connect.type: bytes`
 * string ↔ number change); `meaning` judges them by what a validator accepts.
 */
export type Reading = 'confluent' | 'meaning';

export class SchemaInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaInputError';
  }
}

/** A position in a document: the schema value, and the resource (`$id` root) it lives in. */
export interface SchemaNode {
  readonly doc: SchemaDocument;
  /** Root of the enclosing resource; `#…` references resolve against it. */
  readonly base: unknown;
  readonly value: unknown;
  /** Set when this node stands for one facet of `value` (see schema-shape.ts). */
  readonly facet?: string;
}

/**
 * Which loader Confluent would use: `$schema` naming 2019-09 or 2020-12 selects its newer loader,
 * anything else (or none) draft-07's. Needed where the two read the same keywords differently.
 */
export type SchemaDialect = 'draft-07' | '2020-12';

export function dialectOf(root: unknown): SchemaDialect {
  const declared = isObject(root) ? root['$schema'] : undefined;
  return typeof declared === 'string' && /draft\/(2019-09|2020-12)\/schema/.test(declared)
    ? '2020-12'
    : 'draft-07';
}

/**
 * Keywords of the other dialect: draft-07 validators (Confluent's everit loader, ajv's draft-07
 * class) do not know the 2019-09/2020-12 ones, so `{"minContains": 1}` there is `{}`.
 */
const NEWER_KEYWORDS: ReadonlySet<string> = new Set([
  'prefixItems',
  'dependentSchemas',
  'dependentRequired',
  'minContains',
  'maxContains',
  'unevaluatedProperties',
  'unevaluatedItems',
]);
/**
 * Draft-07 `dependencies` is gone from 2019-09/2020-12. Confluent's 2020-12 loader ignores it;
 * ajv's 2020-12 class still applies it, so policy `evgen` refuses to judge a change to it
 * (unshaped-keywords.ts) rather than pick one of the two meanings.
 */
const OLDER_KEYWORDS: ReadonlySet<string> = new Set(['dependencies']);

function foreignKeywords(dialect: SchemaDialect, reading: Reading): ReadonlySet<string> {
  if (dialect === 'draft-07') return NEWER_KEYWORDS;
  return reading === 'confluent' ? OLDER_KEYWORDS : new Set();
}

export class SchemaDocument {
  /** Embedded resources by `$id`, and anchors (`$anchor`, draft-07 `"$id": "#name"`). */
  private readonly resources = new Map<string, unknown>();
  private readonly anchors = new Map<string, unknown>();
  private foreignSeen = false;

  readonly dialect: SchemaDialect;
  /** The schema as the reading sees it: keywords of the other dialect left out. */
  readonly root: unknown;
  /**
   * followReferences (schema-shape.ts) per schema object of this document, by resource and
   * facet: union trials follow the same `$ref`s again and again.
   */
  readonly referencesFollowed = new WeakMap<
    object,
    { readonly from: SchemaNode; readonly to: SchemaNode }[]
  >();

  /**
   * `reading` decides how a schema is loaded where Confluent's loader and the meaning part ways
   * (see schema-shape.ts): `$ref` siblings and chains, a `type` beside another type's keywords.
   */
  constructor(
    written: unknown,
    readonly reading: Reading = 'confluent',
  ) {
    this.dialect = dialectOf(written);
    const foreign = foreignKeywords(this.dialect, reading);
    this.root = written;
    this.index(written, true, foreign);
    if (this.foreignSeen) {
      // Rare: rebuild without them (schema positions only) and index the copy instead.
      this.root = mapSchema(written, (node) => {
        for (const keyword of foreign) delete node[keyword];
        return node;
      });
      this.resources.clear();
      this.anchors.clear();
      this.index(this.root, true, new Set());
    }
  }

  get rootNode(): SchemaNode {
    return { doc: this, base: this.root, value: this.root };
  }

  /**
   * A subschema found under `parent` (keeps the parent's resource unless it declares its own
   * `$id`). Only the parent's resource matters, not its facet.
   */
  child(parent: Pick<SchemaNode, 'base'>, value: unknown): SchemaNode {
    const base =
      isObject(value) && typeof value['$id'] === 'string' && !value['$id'].startsWith('#')
        ? value
        : parent.base;
    return { doc: this, base, value };
  }

  /** Resolves `$ref` (as written in a schema inside `from`; only its resource matters). */
  resolve(from: Pick<SchemaNode, 'base'>, ref: string): SchemaNode {
    const hash = ref.indexOf('#');
    const resourcePart = hash === -1 ? ref : ref.slice(0, hash);
    const fragment = hash === -1 ? '' : ref.slice(hash + 1);
    let resource: unknown = from.base;
    if (resourcePart !== '') {
      resource = this.findResource(resourcePart);
      if (resource === undefined)
        throw new SchemaInputError(
          `cannot resolve $ref "${ref}": no schema with that $id in the document`,
        );
    }
    if (fragment === '') return { doc: this, base: resource, value: resource };
    if (!fragment.startsWith('/')) {
      const anchored = this.anchors.get(fragment);
      if (anchored === undefined)
        throw new SchemaInputError(`cannot resolve $ref "${ref}": unknown anchor`);
      return this.child({ base: resource }, anchored);
    }
    let current: unknown = resource;
    for (const raw of fragment.slice(1).split('/')) {
      const segment = unescapeSegment(decodeURIComponent(raw));
      if (Array.isArray(current)) current = current[Number(segment)];
      else if (isObject(current)) current = current[segment];
      else current = undefined;
      if (current === undefined)
        throw new SchemaInputError(`cannot resolve $ref "${ref}": pointer leads nowhere`);
    }
    return { doc: this, base: resource, value: current };
  }

  private findResource(uri: string): unknown {
    const exact = this.resources.get(uri);
    if (exact !== undefined) return exact;
    // Bundled files keep their original relative $ref ("../../_common/money.schema.json");
    // match the embedded resource by its last path segment.
    const name = uri.slice(uri.lastIndexOf('/') + 1);
    for (const [id, resource] of this.resources) {
      if (id === name || id.endsWith(`/${name}`)) return resource;
    }
    return undefined;
  }

  private index(value: unknown, isRoot: boolean, foreign: ReadonlySet<string>): void {
    if (Array.isArray(value)) {
      for (const item of value) this.index(item, false, foreign);
      return;
    }
    if (!isObject(value)) return;
    const id = value['$id'];
    if (typeof id === 'string') {
      if (id.startsWith('#')) this.anchors.set(id.slice(1), value);
      else if (!isRoot) this.resources.set(id, value);
      else this.resources.set(id, value);
    }
    const anchor = value['$anchor'];
    if (typeof anchor === 'string') this.anchors.set(anchor, value);
    for (const [key, child] of Object.entries(value)) {
      // Data positions never hold schemas; skip them so an enum value cannot register an $id.
      if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') continue;
      if (foreign.has(key)) this.foreignSeen = true;
      this.index(child, false, foreign);
    }
  }
}
