/** One comparer: looks at a few keywords of two shapes of the same kind and reports differences. */
import type { CompareSchemas } from '../compare-schemas.js';
import type { DiffContext } from '../diff-context.js';
import type { Shape, ShapeKind } from '../schema-shape.js';

export interface ShapeRule {
  /** For tests and documentation, e.g. `numeric-bounds`. */
  readonly name: string;
  /** Kinds of schema the rule applies to (both sides have the same kind). */
  readonly kinds: readonly ShapeKind[] | 'all';
  compare(ctx: DiffContext, original: Shape, update: Shape, compareSchemas: CompareSchemas): void;
}
