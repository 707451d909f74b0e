/**
 * State of one comparison: the current path, the differences found so far, which difference
 * types count as compatible (comparers ask "is this sub-comparison compatible?" to match
 * subschemas and to decide whether a partially open content model covers a property), and a
 * shared guard against endless recursion through `$ref` cycles plus a memo of finished pairs.
 *
 * A pair met again while it is still being compared (a recursive cycle) is assumed to read
 * cleanly. That assumption can be wrong, and a pair compared under it may already have been
 * memoized and matched in a union. So `DiffContext.run` repeats the comparison until no assumption
 * is contradicted: a pair assumed clean that turned out incompatible is replayed with its real
 * differences in the next round (a greatest fixed point; the set only grows, so it ends).
 */
import { pointerSegment } from '../common/json-pointer.js';
import { ComparisonLimitError } from './comparison-problem.js';
import type { DifferenceType } from './rules/difference-types.js';
import { DifferenceList, type Difference } from './difference-list.js';
import { tagsExclude } from './discriminators.js';
import type { Reading, SchemaNode } from './schema-document.js';

export type { Difference } from './difference-list.js';

/**
 * Node identities, stable across rounds so pair keys can be carried from one round to the next.
 * Subschemas are identified by content, so equal ones written in many places — the same property
 * schema in each of 100 union branches, the same union of `$ref`s under each of 12 recursive
 * definitions — are compared once. Without references (`c…`) content and dialect say everything;
 * a schema with a reference is also identified by the document and the resource it lives in
 * (`r…`), which is all its targets depend on (see SchemaDocument.resolve).
 */
export interface Identities {
  /** Documents and resources, by object. */
  readonly ids: WeakMap<object, string>;
  /** Per value: twice a number per distinct content, plus 1 when it is free of references. */
  readonly contentIds: WeakMap<object, number>;
  readonly byContent: Map<string, number>;
  nextId: number;
}

/**
 * Fresh identities. Comparisons may share one (a catalog check does, for all its pairs): ids only
 * name values, and each comparison keeps its own memo, so sharing saves re-reading the same
 * schema objects, nothing more.
 */
export function newIdentities(): Identities {
  return { ids: new WeakMap(), contentIds: new WeakMap(), byContent: new Map(), nextId: 1 };
}

const REFERENCES: ReadonlySet<string> = new Set(['$ref', '$dynamicRef', '$recursiveRef']);

/**
 * The content of a value (see Identities.contentIds), computed bottom up so each object is read
 * once. Its text only needs to be unambiguous, never read back: strings are written with their
 * length before them instead of escaped (JSON.stringify per key and value was most of the cost).
 */
function contentOf(value: object, identities: Identities): number {
  const known = identities.contentIds.get(value);
  if (known !== undefined) return known;
  let free = true;
  let text: string;
  if (Array.isArray(value)) {
    text = '[';
    for (const item of value as unknown[]) {
      if (typeof item === 'object' && item !== null) {
        const content = contentOf(item, identities);
        if (content % 2 === 0) free = false;
        text += `#${content},`;
      } else text += `${scalarText(item)},`;
    }
  } else {
    text = '{';
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length > 1) keys.sort();
    for (const key of keys) {
      if (REFERENCES.has(key)) free = false;
      const child = record[key];
      if (typeof child === 'object' && child !== null) {
        const content = contentOf(child, identities);
        if (content % 2 === 0) free = false;
        text += `${key.length}:${key}#${content},`;
      } else text += `${key.length}:${key}${scalarText(child)},`;
    }
  }
  let id = identities.byContent.get(text);
  if (id === undefined) identities.byContent.set(text, (id = identities.byContent.size));
  const content = id * 2 + (free ? 1 : 0);
  identities.contentIds.set(value, content);
  return content;
}

/** A JSON scalar in contentOf's text: its kind, then its value (a string with its length first). */
function scalarText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return `s${value.length}:${value}`;
    case 'number':
      return `n${value}`;
    case 'boolean':
      return value ? 't' : 'f';
    default:
      // null, and undefined as JSON.stringify would write it in an array
      return 'z';
  }
}

/**
 * Finished comparisons of pairs that contain no reference, kept across the comparisons of one
 * session (a catalog check compares each version with several others, both ways, and most of
 * their subschemas — every property schema left as it was — are the same content each time).
 * Such a pair's differences depend only on the two values, their dialect and facet (all in the
 * pair key), the reading, which types count as compatible and exhaustiveness: it has no cycle to
 * assume anything about, and its paths are relative to the pair. So a pair settled once is
 * replayed, never compared again, whichever comparison meets it next.
 */
export class SettledPairs {
  readonly #byTypes = new WeakMap<
    ReadonlySet<DifferenceType>,
    Map<string, Map<string, DifferenceList>>
  >();

  of(
    compatibleTypes: ReadonlySet<DifferenceType>,
    reading: Reading,
    exhaustive: boolean,
  ): Map<string, DifferenceList> {
    let byReading = this.#byTypes.get(compatibleTypes);
    if (byReading === undefined)
      this.#byTypes.set(
        compatibleTypes,
        (byReading = new Map<string, Map<string, DifferenceList>>()),
      );
    const key = `${reading}:${String(exhaustive)}`;
    let pairs = byReading.get(key);
    if (pairs === undefined) byReading.set(key, (pairs = new Map<string, DifferenceList>()));
    return pairs;
  }
}

/** A node id given by content (see Identities): the node has no reference below it. */
const CONTENT_ID = /^c\d+:/;

interface Shared {
  readonly inProgress: Set<string>;
  readonly memo: Map<string, DifferenceList>;
  /** Reference-free pairs settled by earlier comparisons of the session (see SettledPairs). */
  readonly settled: Map<string, DifferenceList> | undefined;
  /** Pairs met in a cycle and assumed clean in this round. */
  readonly assumedClean: Set<string>;
  /** Pairs an earlier round found incompatible: their differences, relative to the pair. */
  readonly knownIncompatible: ReadonlyMap<string, DifferenceList>;
  readonly identities: Identities;
  readonly reading: Reading;
  readonly budget: Budget;
  /** Compare every candidate pair, without the shortcut of `cannotRead` (tests check the shortcut). */
  readonly exhaustive: boolean;
}

/**
 * What one comparison may cost. Schema pairs compared plus differences replayed from the memo
 * bound time and memory (a union of n branches against one of m compares n × m pairs, and
 * nested unions multiply); the nesting depth of pairs bounds the stack, since `$ref` chains and
 * rings make it as deep as the user writes. Past either, the comparison stops with a
 * ComparisonLimitError at the pair it was comparing, instead of running for minutes or crashing.
 * Replayed differences are shared, not copied (see difference-list.ts), but they are counted as
 * many times as they are replayed: that count is what grows with nested unions, well before the
 * pairs compared do, and what the report would have to expand.
 */
export interface ComparisonLimits {
  /** Schema pairs compared (memo misses). */
  readonly work: number;
  /** Differences replayed from the memo into callers, and differences in the report. */
  readonly replayed: number;
  readonly depth: number;
}

export const DEFAULT_LIMITS: ComparisonLimits = { work: 100_000, replayed: 500_000, depth: 400 };

export interface RunOptions {
  readonly limits?: ComparisonLimits;
  /** Compare every candidate pair, without the shortcut of `cannotRead` (to test the shortcut). */
  readonly exhaustive?: boolean;
  /** Shared with other comparisons (see newIdentities). */
  readonly identities?: Identities;
  /** Shared with other comparisons (see SettledPairs); needs shared identities to find anything. */
  readonly settled?: SettledPairs;
}

interface Budget {
  readonly limits: ComparisonLimits;
  work: number;
  replayed: number;
  depth: number;
}

export class DiffContext {
  private readonly found: DifferenceList;

  private constructor(
    readonly compatibleTypes: ReadonlySet<DifferenceType>,
    private readonly segments: string[],
    private readonly shared: Shared,
  ) {
    this.found = new DifferenceList(compatibleTypes);
  }

  /** Runs a whole comparison (rounds until no cycle assumption is contradicted); returns the root context. */
  static run(
    compatibleTypes: ReadonlySet<DifferenceType>,
    compare: (ctx: DiffContext) => void,
    reading: Reading = 'confluent',
    options: RunOptions = {},
  ): DiffContext {
    const limits = options.limits ?? DEFAULT_LIMITS;
    const exhaustive = options.exhaustive ?? false;
    const identities = options.identities ?? newIdentities();
    // One budget for every round: a repeated round costs as much as the first.
    const budget: Budget = { limits, work: 0, replayed: 0, depth: 0 };
    const knownIncompatible = new Map<string, DifferenceList>();
    const settled = options.settled?.of(compatibleTypes, reading, exhaustive);
    for (;;) {
      const shared: Shared = {
        inProgress: new Set(),
        memo: new Map(),
        settled,
        assumedClean: new Set(),
        knownIncompatible,
        identities,
        reading,
        budget,
        exhaustive,
      };
      const ctx = new DiffContext(compatibleTypes, [], shared);
      compare(ctx);
      let contradicted = false;
      for (const key of shared.assumedClean) {
        const found = shared.memo.get(key);
        if (found !== undefined && !knownIncompatible.has(key) && !found.compatible) {
          knownIncompatible.set(key, found);
          contradicted = true;
        }
      }
      if (!contradicted) return ctx;
    }
  }

  /** A fresh context at the same path, for a trial comparison whose result is used only if it fits. */
  sub(): DiffContext {
    return new DiffContext(this.compatibleTypes, [...this.segments], this.shared);
  }

  /**
   * True when a trial of `writer` against `reader` is sure to find them incompatible without
   * comparing them (see discriminators.ts); callers that only need "compatible?" skip the trial.
   */
  cannotRead(writer: SchemaNode, reader: SchemaNode): boolean {
    return !this.shared.exhaustive && tagsExclude(writer, reader);
  }

  get reading(): Reading {
    return this.shared.reading;
  }

  /** Shared, finished lists stay as they are: add them with addAll, never change them. */
  get differences(): DifferenceList {
    return this.found;
  }

  isCompatible(): boolean {
    return this.found.compatible;
  }

  /**
   * The differences with full paths for the report: unjudged ones left out, and repeats where a
   * cycle closes unless `withRepeats`. Past the report limit, the comparison stops here.
   */
  reported(withRepeats: boolean): Difference[] {
    const limit = this.shared.budget.limits.replayed;
    return this.found.expand({
      judgedOnly: true,
      directOnly: !withRepeats,
      limit,
      onLimit: () => {
        throw new ComparisonLimitError(
          'too many differences to report (unions of many branches, nested unions)',
          limit,
          pathOf(this.segments),
        );
      },
    });
  }

  /** Runs `body` one level deeper: `enter(['properties', 'foo'], …)`. Segments are escaped. */
  enter(segments: readonly (string | number)[], body: () => void): void {
    const depth = this.segments.length;
    for (const segment of segments) this.segments.push(pointerSegment(segment));
    try {
      body();
    } finally {
      this.segments.length = depth;
    }
  }

  add(type: DifferenceType, ...attribute: readonly (string | number)[]): void {
    this.found.push({ type, path: pathOf([...this.segments, ...attribute.map(pointerSegment)]) });
  }

  /** A change to `keyword` that cannot be judged by meaning (see Difference.unjudged). */
  addUnjudged(keyword: string): void {
    this.found.push({
      type: 'COMBINED_TYPE_CHANGED',
      path: pathOf([...this.segments, pointerSegment(keyword)]),
      unjudged: keyword,
    });
  }

  /** A finished list found at this context's path or below (a trial's, parts'), shared. */
  addAll(differences: DifferenceList): void {
    this.found.link(differences, '', false);
  }

  /**
   * Compares a pair once per round: a pair met again while still being compared is a recursive
   * cycle and counts as clean (unless an earlier round proved otherwise); a finished pair is
   * replayed from the memo, rebased onto the current path.
   */
  memoized(original: SchemaNode, update: SchemaNode, compare: (ctx: DiffContext) => void): void {
    const originalId = this.idOf(original);
    const updateId = this.idOf(update);
    const key = `${originalId}|${updateId}`;
    const settled =
      this.shared.settled !== undefined && CONTENT_ID.test(originalId) && CONTENT_ID.test(updateId)
        ? this.shared.settled
        : undefined;
    const cached = this.shared.memo.get(key) ?? settled?.get(key);
    if (cached !== undefined) {
      this.addRebased(cached);
      return;
    }
    if (this.shared.inProgress.has(key)) {
      const known = this.shared.knownIncompatible.get(key);
      if (known !== undefined) this.addRebased(known, true);
      else this.shared.assumedClean.add(key);
      return;
    }
    this.spend(1);
    const budget = this.shared.budget;
    if (budget.depth >= budget.limits.depth)
      throw new ComparisonLimitError(
        'schemas nested (through $ref or subschemas) deeper than the comparison can follow',
        budget.limits.depth,
        pathOf(this.segments),
      );
    this.shared.inProgress.add(key);
    budget.depth++;
    try {
      const root = new DiffContext(this.compatibleTypes, [], this.shared);
      try {
        compare(root);
      } catch (error) {
        // The pair was compared from a fresh root: put the limit's place back under this one.
        if (error instanceof ComparisonLimitError)
          throw new ComparisonLimitError(
            error.what,
            error.limit,
            this.rebasedPath(error.path === '' ? '#/' : error.path),
          );
        throw error;
      }
      this.shared.memo.set(key, root.found);
      settled?.set(key, root.found);
      this.addRebased(root.found);
    } finally {
      budget.depth--;
      this.shared.inProgress.delete(key);
    }
  }

  /** Differences replayed from the memo: bounded separately, as a union re-reads them per trial. */
  private spendReplay(units: number): void {
    const budget = this.shared.budget;
    budget.replayed += units;
    if (budget.replayed > budget.limits.replayed)
      throw new ComparisonLimitError(
        'too many differences to replay (unions of many branches, nested unions)',
        budget.limits.replayed,
        pathOf(this.segments),
      );
  }

  /** Runs `body`; a limit it meets without a place of its own is placed here. */
  locating<T>(body: () => T): T {
    try {
      return body();
    } catch (error) {
      if (error instanceof ComparisonLimitError && error.path === '')
        throw new ComparisonLimitError(error.what, error.limit, pathOf(this.segments));
      throw error;
    }
  }

  /** Counts work against the budget; past it, the comparison stops where it is. */
  spend(units: number): void {
    const budget = this.shared.budget;
    budget.work += units;
    if (budget.work > budget.limits.work)
      throw new ComparisonLimitError(
        'too many schema pairs to compare (unions of many branches, nested unions)',
        budget.limits.work,
        pathOf(this.segments),
      );
  }

  /** A `#/…` path relative to this context's memo root, made relative to the enclosing one. */
  private rebasedPath(relative: string): string {
    const rest = relative.slice(2);
    if (this.segments.length === 0) return relative;
    const prefix = pathOf(this.segments);
    return rest === '' ? prefix : `${prefix}/${rest}`;
  }

  /** A memoized pair's differences (paths relative to the pair), at this context's path. */
  private addRebased(relative: DifferenceList, viaCycle = false): void {
    this.spendReplay(relative.size);
    this.found.link(relative, this.segments.join('/'), viaCycle);
  }

  private idOf(node: SchemaNode): string {
    const value = node.value;
    if (typeof value !== 'object' || value === null) return `${String(value)}:${node.facet ?? ''}`;
    const content = contentOf(value, this.shared.identities);
    // The dialect decides how some keywords read, so equal content in two dialects differs.
    if (content % 2 === 1) return `c${content >> 1}:${node.doc.dialect}:${node.facet ?? ''}`;
    return `r${content >> 1}:${this.objectId(node.doc)}:${this.objectId(node.base)}:${node.facet ?? ''}`;
  }

  private objectId(value: unknown): string {
    if (typeof value !== 'object' || value === null) return String(value);
    const identities = this.shared.identities;
    let id = identities.ids.get(value);
    if (id === undefined) {
      id = `${identities.nextId++}`;
      identities.ids.set(value, id);
    }
    return id;
  }
}

function pathOf(segments: readonly string[]): string {
  return `#/${segments.join('/')}`;
}
