/**
 * allOf / anyOf / oneOf. The criterion may only loosen: anything → anyOf; a singleton → oneOf;
 * singleton ↔ singleton; allOf → a singleton of any criterion (each conjunct alone accepts what
 * the conjunction accepted). Then every subschema of the smaller side must pair with a compatible
 * subschema of the other side (maximum bipartite matching). Fewer conjuncts or more alternatives
 * loosen. Growth is named after the reader's criterion, shrinking after the writer's: an allOf
 * that lost conjuncts narrowed a product (compatible) even when the reader is a union.
 */
import { maximumMatching } from '../bipartite-matching.js';
import { canonicalJson } from '../../common/canonical-json.js';
import type { CompareSchemas } from './shape-rule.js';
import type { DiffContext } from '../diff-context.js';
import type { DifferenceList } from '../difference-list.js';
import type { SchemaNode } from '../schema-document.js';
import { shapeOf, type CombinedCriterion, type Shape } from '../schema-shape.js';
import type { DifferenceType } from './difference-types.js';
import type { ShapeRule } from './shape-rule.js';

function criterionChange(original: Shape, update: Shape): DifferenceType | undefined {
  const from = original.criterion;
  const to = update.criterion;
  const size = (shape: Shape) => shape.subschemas?.length ?? 0;
  if (from === to) return undefined;
  const loosens =
    to === 'anyOf' ||
    (size(original) === 1 && (size(update) === 1 || to === 'oneOf')) ||
    (size(update) === 1 && from === 'allOf');
  return loosens ? 'COMBINED_TYPE_EXTENDED' : 'COMBINED_TYPE_CHANGED';
}

const canonicalKeys = new WeakMap<object, string>();

/** The canonical JSON of a subschema, computed once per schema object (unions compare it often). */
function keyOf(node: SchemaNode): string {
  const value = node.value;
  if (typeof value !== 'object' || value === null)
    return `${node.facet ?? ''}:${canonicalJson(value)}`;
  let key = canonicalKeys.get(value);
  if (key === undefined) {
    key = canonicalJson(value);
    canonicalKeys.set(value, key);
  }
  return `${node.facet ?? ''}:${key}`;
}

/**
 * Pairs subschemas written identically on both sides (and free of references, whose targets may
 * differ between the documents). When these pairs already cover the smaller side, the matching is
 * maximum and no other pair needs comparing: a union of n unchanged branches costs n, not n².
 */
function identicalPairs(
  left: readonly SchemaNode[],
  right: readonly SchemaNode[],
): Map<number, number> | undefined {
  const byKey = new Map<string, number[]>();
  right.forEach((node, j) => {
    const key = keyOf(node);
    if (!key.includes('"$ref"') && !key.includes('Ref"'))
      byKey.set(key, [...(byKey.get(key) ?? []), j]);
  });
  const matching = new Map<number, number>();
  left.forEach((node, i) => {
    const j = byKey.get(keyOf(node))?.shift();
    if (j !== undefined) matching.set(j, i);
  });
  return matching.size === Math.min(left.length, right.length) ? matching : undefined;
}

/** Equal subschemas collapse, as in a set. */
function distinct(nodes: readonly SchemaNode[]): SchemaNode[] {
  const seen = new Set<string>();
  return nodes.filter((node) => {
    const key = keyOf(node);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Which part of a schema object a facet (or a plain schema of that kind) stands for. */
function categoryOf(node: SchemaNode): string {
  const facet = node.facet;
  if (facet !== undefined) return facet.startsWith('type:') || facet === 'types' ? 'type' : facet;
  const shape = shapeOf(node);
  switch (shape.kind) {
    case 'enum':
    case 'const':
    case 'not':
      return shape.kind;
    case 'combined':
      return shape.synthetic === true ? 'type' : (shape.criterion ?? 'allOf');
    case 'empty':
    case 'false':
      return shape.kind;
    default:
      return 'type';
  }
}

/**
 * Two schema objects split into facets (`type` + `enum`, …) are compared facet by facet: the
 * `enum` of one with the `enum` of the other, and so on. This reports what changed inside a facet
 * (ENUM_ARRAY_NARROWED at `…/enum`) where a subschema matching would only say "changed".
 * Returns false when the facets do not line up one to one.
 */
function compareFacets(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  compareSchemas: CompareSchemas,
): boolean {
  const index = (nodes: readonly SchemaNode[]) => {
    const byCategory = new Map<string, SchemaNode>();
    for (const node of nodes) {
      const category = categoryOf(node);
      if (byCategory.has(category)) return undefined;
      byCategory.set(category, node);
    }
    return byCategory;
  };
  const before = index(original.subschemas ?? []);
  const after = index(update.subschemas ?? []);
  if (before === undefined || after === undefined) return false;
  const lost = [...before.keys()].some((category) => !after.has(category));
  const gained = [...after.keys()].some((category) => !before.has(category));
  if (gained) ctx.add('PRODUCT_TYPE_EXTENDED');
  if (lost) ctx.add('PRODUCT_TYPE_NARROWED');
  for (const [category, node] of [...before].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const partner = after.get(category);
    if (partner !== undefined) compareSchemas(ctx, node, partner);
  }
  return true;
}

export function compareCombined(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  compareSchemas: CompareSchemas,
): void {
  // Confluent reads `type` + a combiner as a real allOf (see Shape.indexed); by meaning, the parts
  // of one schema object are compared part by part like any other facets.
  const indexed = (shape: Shape) => shape.indexed === true && ctx.reading === 'confluent';
  if (
    original.synthetic === true &&
    update.synthetic === true &&
    !indexed(original) &&
    !indexed(update) &&
    original.criterion === 'allOf' &&
    update.criterion === 'allOf'
  ) {
    if (compareFacets(ctx, original, update, compareSchemas)) return;
  }
  const change = criterionChange(original, update);
  if (change !== undefined) ctx.add(change);
  if (change === 'COMBINED_TYPE_CHANGED') return;

  const left = distinct(original.subschemas ?? []);
  const right = distinct(update.subschemas ?? []);
  const readerCriterion: CombinedCriterion | undefined = update.criterion;
  const writerCriterion: CombinedCriterion | undefined = original.criterion;
  if (left.length < right.length)
    ctx.add(readerCriterion === 'allOf' ? 'PRODUCT_TYPE_EXTENDED' : 'SUM_TYPE_EXTENDED');
  else if (left.length > right.length)
    ctx.add(
      writerCriterion === 'anyOf' || writerCriterion === 'oneOf'
        ? 'SUM_TYPE_NARROWED'
        : 'PRODUCT_TYPE_NARROWED',
    );

  if (identicalPairs(left, right) !== undefined) return;

  const edges: number[][] = [];
  const found = new Map<string, DifferenceList>();
  left.forEach((originalSub, i) => {
    edges[i] = [];
    right.forEach((updateSub, j) => {
      // A pair a tag value tells apart is no edge: with it skipped, n tagged branches cost n.
      if (ctx.cannotRead(originalSub, updateSub)) return;
      const trial = ctx.sub();
      const compare = () => compareSchemas(trial, originalSub, updateSub);
      if (original.synthetic === true && !indexed(original)) compare();
      else trial.enter([original.criterion ?? 'allOf', i], compare);
      if (trial.isCompatible()) {
        edges[i]!.push(j);
        found.set(`${i}:${j}`, trial.differences);
      }
    });
  });
  const matching = maximumMatching(left.length, right.length, edges);
  for (const [j, i] of [...matching].sort((a, b) => a[1] - b[1]))
    ctx.addAll(found.get(`${i}:${j}`)!);
  if (matching.size < Math.min(left.length, right.length))
    ctx.add('COMBINED_TYPE_SUBSCHEMAS_CHANGED');
}

export const combinedRule: ShapeRule = {
  id: 'combined',
  purpose:
    'allOf/anyOf/oneOf: the combining keyword may only loosen, and every subschema of the smaller side must pair with a compatible one of the other (maximum matching).',
  emits: [
    'COMBINED_TYPE_EXTENDED',
    'COMBINED_TYPE_CHANGED',
    'COMBINED_TYPE_SUBSCHEMAS_CHANGED',
    'PRODUCT_TYPE_EXTENDED',
    'PRODUCT_TYPE_NARROWED',
    'SUM_TYPE_EXTENDED',
    'SUM_TYPE_NARROWED',
  ],
  kinds: ['combined'],
  compare: compareCombined,
};
