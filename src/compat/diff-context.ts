/**
 * State of one comparison: the current path, the differences found so far, which difference
 * types count as compatible (comparers ask "is this sub-comparison compatible?" to match
 * subschemas and to decide whether a partially open content model covers a property), and a
 * shared guard against endless recursion through `$ref` cycles plus a memo of finished pairs.
 */
import { pointerSegment } from '../catalog/catalog-error.js';
import type { DifferenceType } from './rules/difference-types.js';
import type { SchemaNode } from './schema-document.js';

export interface Difference {
  readonly type: DifferenceType;
  /** JSON pointer fragment of where it happened, e.g. `#/properties/foo` (`#/` is the root). */
  readonly path: string;
}

interface Shared {
  readonly inProgress: Set<string>;
  readonly memo: Map<string, readonly Difference[]>;
  readonly ids: WeakMap<object, number>;
  nextId: number;
}

export class DiffContext {
  private readonly found: Difference[] = [];

  private constructor(
    readonly compatibleTypes: ReadonlySet<DifferenceType>,
    private readonly segments: string[],
    private readonly shared: Shared,
  ) {}

  static create(compatibleTypes: ReadonlySet<DifferenceType>): DiffContext {
    return new DiffContext(compatibleTypes, [], { inProgress: new Set(), memo: new Map(), ids: new WeakMap(), nextId: 1 });
  }

  /** A fresh context at the same path, for a trial comparison whose result is used only if it fits. */
  sub(): DiffContext {
    return new DiffContext(this.compatibleTypes, [...this.segments], this.shared);
  }

  get differences(): readonly Difference[] {
    return this.found;
  }

  isCompatible(): boolean {
    return this.found.every((difference) => this.compatibleTypes.has(difference.type));
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

  addAll(differences: readonly Difference[]): void {
    this.found.push(...differences);
  }

  /**
   * Compares a pair once: a pair met again while still being compared is a recursive cycle and
   * counts as equal; a finished pair is replayed from the memo, rebased onto the current path.
   */
  memoized(original: SchemaNode, update: SchemaNode, compare: (ctx: DiffContext) => void): void {
    const key = `${this.idOf(original)}|${this.idOf(update)}`;
    const cached = this.shared.memo.get(key);
    if (cached !== undefined) {
      this.addRebased(cached);
      return;
    }
    if (this.shared.inProgress.has(key)) return;
    this.shared.inProgress.add(key);
    try {
      const root = new DiffContext(this.compatibleTypes, [], this.shared);
      compare(root);
      this.shared.memo.set(key, root.found);
      this.addRebased(root.found);
    } finally {
      this.shared.inProgress.delete(key);
    }
  }

  private addRebased(relative: readonly Difference[]): void {
    if (this.segments.length === 0) {
      this.found.push(...relative);
      return;
    }
    const prefix = pathOf(this.segments);
    for (const difference of relative) {
      const rest = difference.path.slice(2);
      this.found.push({ type: difference.type, path: rest === '' ? prefix : `${prefix}/${rest}` });
    }
  }

  private idOf(node: SchemaNode): string {
    const value = node.value;
    if (typeof value !== 'object' || value === null) return `${String(value)}:${node.facet ?? ''}`;
    let id = this.shared.ids.get(value);
    if (id === undefined) {
      id = this.shared.nextId++;
      this.shared.ids.set(value, id);
    }
    return `${id}:${node.facet ?? ''}`;
  }
}

function pathOf(segments: readonly string[]): string {
  return `#/${segments.join('/')}`;
}
