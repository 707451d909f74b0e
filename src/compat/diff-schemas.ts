/**
 * Public entry points of the difference engine. `original` is the schema data was written with,
 * `update` the schema that must read it (Confluent's BACKWARD reading of a pair).
 */
import type { CompatibilityPolicy, JsonSchema } from '../catalog/model.js';
import { compareSchemas } from './compare-schemas.js';
import {
  DiffContext,
  newIdentities,
  SettledPairs,
  type Difference,
  type Identities,
  type RunOptions,
} from './diff-context.js';
import { POLICIES, STRICT_COMPATIBLE } from './policy.js';
import type { DifferenceType } from './rules/difference-types.js';
import { SchemaDocument, type Reading } from './schema-document.js';
import { compareStrings } from '../common/json-value.js';
import { UnjudgedChangeError } from './unjudged-change.js';

export interface SchemaChange {
  readonly type: DifferenceType;
  /** JSON pointer fragment, e.g. `#/properties/foo`; `#/` is the root. */
  readonly path: string;
}

export interface SchemaDiffResult {
  /** Can a reader using `update` read everything `original` allowed? */
  readonly compatible: boolean;
  /** Every difference found, sorted by path then type. */
  readonly changes: readonly SchemaChange[];
  /** The changes the policy does not accept. */
  readonly incompatibleChanges: readonly SchemaChange[];
}

function sorted(changes: readonly Difference[]): SchemaChange[] {
  return changes
    .map(({ type, path }) => ({ type, path }))
    .sort((a, b) => compareStrings(a.path, b.path) || compareStrings(a.type, b.type));
}

function run(
  original: unknown,
  update: unknown,
  compatibleTypes: ReadonlySet<DifferenceType>,
  reading: Reading,
  options: RunOptions = {},
  session?: ComparisonSession,
): SchemaDiffResult {
  const from = (session?.document(original, reading) ?? new SchemaDocument(original, reading))
    .rootNode;
  const to = (session?.document(update, reading) ?? new SchemaDocument(update, reading)).rootNode;
  const ctx = DiffContext.run(
    compatibleTypes,
    (root) => compareSchemas(root, from, to),
    reading,
    options,
  );
  const all = ctx.differences;
  // Refuse only when nothing else already makes the pair incompatible.
  if (all.hasUnjudged && all.judgedCompatible) {
    const unjudged = all.firstUnjudged()!;
    throw new UnjudgedChangeError(unjudged.unjudged!, unjudged.path);
  }
  // Repeats of a recursive pair's differences where its cycle closes are left out, unless the
  // verdict needs them (they alone make the pair incompatible).
  const changes = sorted(ctx.reported(!all.judgedCompatible && all.directCompatible));
  const incompatibleChanges = changes.filter((change) => !compatibleTypes.has(change.type));
  return { compatible: incompatibleChanges.length === 0, changes, incompatibleChanges };
}

/** Confluent STRICT, BACKWARD: exactly what Schema Registry would say about the pair. */
export function diffSchemas(original: JsonSchema, update: JsonSchema): SchemaDiffResult {
  return run(original, update, STRICT_COMPATIBLE, 'confluent');
}

/**
 * What several checks of one catalog share: each schema's policy views, computed once however
 * many pairs it is in, the engine's identities of schema objects (see newIdentities), and the
 * reference-free subschema pairs already compared (see SettledPairs).
 */
export class ComparisonSession {
  readonly identities: Identities = newIdentities();
  readonly settled = new SettledPairs();
  readonly #views = new Map<string, WeakMap<object, unknown>>();
  readonly #documents = new Map<Reading, WeakMap<object, SchemaDocument>>();

  /**
   * The document of a view, indexed once however many pairs it is in (a document holds nothing
   * of a pair: its references and anchors, and the references followed from its nodes).
   */
  document(schema: unknown, reading: Reading): SchemaDocument | undefined {
    if (typeof schema !== 'object' || schema === null) return undefined;
    let documents = this.#documents.get(reading);
    if (documents === undefined) {
      documents = new WeakMap();
      this.#documents.set(reading, documents);
    }
    let document = documents.get(schema);
    if (document === undefined) {
      document = new SchemaDocument(schema, reading);
      documents.set(schema, document);
    }
    return document;
  }

  view(policy: CompatibilityPolicy, side: 'writer' | 'reader', schema: JsonSchema): unknown {
    const definition = POLICIES[policy];
    const make = side === 'writer' ? definition.writerView : definition.readerView;
    if (typeof schema !== 'object' || schema === null) return make(schema);
    const key = `${policy}:${side}`;
    let views = this.#views.get(key);
    if (views === undefined) {
      views = new WeakMap();
      this.#views.set(key, views);
    }
    if (!views.has(schema)) views.set(schema, make(schema));
    return views.get(schema);
  }
}

export interface ReadableOptions {
  /** Compare every union branch pair, even those a tag value tells apart (tests of that shortcut). */
  readonly exhaustive?: boolean;
  /** Views and identities shared with other checks of the same, unchanging schemas. */
  readonly session?: ComparisonSession;
}

/** One direction under a policy: can `reader` read what `writer` wrote? */
export function checkReadable(
  writer: JsonSchema,
  reader: JsonSchema,
  policy: CompatibilityPolicy,
  options: ReadableOptions = {},
): SchemaDiffResult {
  const definition = POLICIES[policy];
  const session = options.session;
  return run(
    session === undefined ? definition.writerView(writer) : session.view(policy, 'writer', writer),
    session === undefined ? definition.readerView(reader) : session.view(policy, 'reader', reader),
    definition.compatibleTypes,
    definition.reading,
    {
      ...(options.exhaustive === true ? { exhaustive: true } : {}),
      ...(session !== undefined
        ? { identities: session.identities, settled: session.settled }
        : {}),
    },
    session,
  );
}
