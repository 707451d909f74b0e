/**
 * Every numeric limit keyword, as data: which way loosens it. A limit that only ever caps
 * (`maxLength`, `maximum`, …) loosens when it increases; a floor (`minItems`, `minimum`, …)
 * loosens when it decreases. Adding a limit tightens, removing one loosens.
 */
import type { Shape, ShapeKind } from '../schema-shape.js';
import type { DifferenceType } from './difference-types.js';
import type { ShapeRule } from './shape-rule.js';

interface BoundKeyword {
  readonly keyword: string;
  readonly kind: ShapeKind;
  readonly added: DifferenceType;
  readonly removed: DifferenceType;
  readonly increased: DifferenceType;
  readonly decreased: DifferenceType;
  /** Reads the effective limit (draft-04 boolean `exclusiveMaximum` folds into `maximum`). */
  readonly read?: (shape: Shape) => number | undefined;
}

const number = (value: unknown): number | undefined =>
  typeof value === 'number' ? value : undefined;
const plain = (keyword: string) => (shape: Shape) => number(shape.keywords[keyword]);
const inclusive = (keyword: string, exclusive: string) => (shape: Shape) =>
  shape.keywords[exclusive] === true ? undefined : number(shape.keywords[keyword]);
const exclusive = (keyword: string, inclusiveKeyword: string) => (shape: Shape) =>
  shape.keywords[keyword] === true
    ? number(shape.keywords[inclusiveKeyword])
    : number(shape.keywords[keyword]);

const bound = (keyword: string, kind: ShapeKind, stem: string): BoundKeyword => ({
  keyword,
  kind,
  added: `${stem}_ADDED` as DifferenceType,
  removed: `${stem}_REMOVED` as DifferenceType,
  increased: `${stem}_INCREASED` as DifferenceType,
  decreased: `${stem}_DECREASED` as DifferenceType,
});

export const BOUND_KEYWORDS: readonly BoundKeyword[] = [
  bound('maxLength', 'string', 'MAX_LENGTH'),
  bound('minLength', 'string', 'MIN_LENGTH'),
  { ...bound('maximum', 'number', 'MAXIMUM'), read: inclusive('maximum', 'exclusiveMaximum') },
  { ...bound('minimum', 'number', 'MINIMUM'), read: inclusive('minimum', 'exclusiveMinimum') },
  {
    ...bound('exclusiveMaximum', 'number', 'EXCLUSIVE_MAXIMUM'),
    read: exclusive('exclusiveMaximum', 'maximum'),
  },
  {
    ...bound('exclusiveMinimum', 'number', 'EXCLUSIVE_MINIMUM'),
    read: exclusive('exclusiveMinimum', 'minimum'),
  },
  bound('maxProperties', 'object', 'MAX_PROPERTIES'),
  bound('minProperties', 'object', 'MIN_PROPERTIES'),
  bound('maxItems', 'array', 'MAX_ITEMS'),
  bound('minItems', 'array', 'MIN_ITEMS'),
  bound('maxContains', 'array', 'MAX_CONTAINS'),
  bound('minContains', 'array', 'MIN_CONTAINS'),
];

export const numericBoundsRule: ShapeRule = {
  name: 'numeric-bounds',
  kinds: ['string', 'number', 'object', 'array'],
  compare(ctx, original, update) {
    for (const rule of BOUND_KEYWORDS) {
      if (rule.kind !== original.kind) continue;
      const read = rule.read ?? plain(rule.keyword);
      const before = read(original);
      const after = read(update);
      if (before === after) continue;
      if (before === undefined) ctx.add(rule.added, rule.keyword);
      else if (after === undefined) ctx.add(rule.removed, rule.keyword);
      else ctx.add(before < after ? rule.increased : rule.decreased, rule.keyword);
    }
  },
};
