/** One comparer: looks at a few keywords of two shapes of the same kind and reports differences. */
import type { DiffContext } from '../diff-context.js';
import type { SchemaNode } from '../schema-document.js';
import type { Shape, ShapeKind } from '../schema-shape.js';
import type { DifferenceType } from './difference-types.js';

/**
 * The walk (compare-schemas), handed to rules that compare nested schemas: a rule recurses through
 * it rather than importing the walk, which imports every rule.
 */
export type CompareSchemas = (
  ctx: DiffContext,
  original: SchemaNode | undefined,
  update: SchemaNode | undefined,
) => void;

/** What a compatibility rule is, for documentation and tests (as buf describes its lint rules). */
export interface RuleInfo {
  /** Stable kebab-case id, e.g. `numeric-bounds`. */
  readonly id: string;
  /** One sentence: what the rule compares and when a change breaks readers. */
  readonly purpose: string;
  /** Every difference type the rule reports itself (nested schemas report through their own rules). */
  readonly emits: readonly DifferenceType[];
}

export interface ShapeRule extends RuleInfo {
  /** Kinds of schema the rule applies to (both sides have the same kind). */
  readonly kinds: readonly ShapeKind[] | 'all';
  compare(ctx: DiffContext, original: Shape, update: Shape, compareSchemas: CompareSchemas): void;
}
