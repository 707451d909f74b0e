/**
 * Every numeric limit keyword, as data: which way loosens it. A limit that only ever caps
 * (`maxLength`, `maximum`, …) loosens when it increases; a floor (`minItems`, `minimum`, …)
 * loosens when it decreases. Adding a limit tightens, removing one loosens.
 */
import type { DiffContext } from '../diff-context.js';
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
}

const number = (value: unknown): number | undefined =>
  typeof value === 'number' ? value : undefined;

const bound = (
  keyword: string,
  kind: ShapeKind,
  added: DifferenceType,
  removed: DifferenceType,
  increased: DifferenceType,
  decreased: DifferenceType,
): BoundKeyword => ({ keyword, kind, added, removed, increased, decreased });

export const BOUND_KEYWORDS: readonly BoundKeyword[] = [
  bound(
    'maxLength',
    'string',
    'MAX_LENGTH_ADDED',
    'MAX_LENGTH_REMOVED',
    'MAX_LENGTH_INCREASED',
    'MAX_LENGTH_DECREASED',
  ),
  bound(
    'minLength',
    'string',
    'MIN_LENGTH_ADDED',
    'MIN_LENGTH_REMOVED',
    'MIN_LENGTH_INCREASED',
    'MIN_LENGTH_DECREASED',
  ),
  bound(
    'maximum',
    'number',
    'MAXIMUM_ADDED',
    'MAXIMUM_REMOVED',
    'MAXIMUM_INCREASED',
    'MAXIMUM_DECREASED',
  ),
  bound(
    'minimum',
    'number',
    'MINIMUM_ADDED',
    'MINIMUM_REMOVED',
    'MINIMUM_INCREASED',
    'MINIMUM_DECREASED',
  ),
  bound(
    'exclusiveMaximum',
    'number',
    'EXCLUSIVE_MAXIMUM_ADDED',
    'EXCLUSIVE_MAXIMUM_REMOVED',
    'EXCLUSIVE_MAXIMUM_INCREASED',
    'EXCLUSIVE_MAXIMUM_DECREASED',
  ),
  bound(
    'exclusiveMinimum',
    'number',
    'EXCLUSIVE_MINIMUM_ADDED',
    'EXCLUSIVE_MINIMUM_REMOVED',
    'EXCLUSIVE_MINIMUM_INCREASED',
    'EXCLUSIVE_MINIMUM_DECREASED',
  ),
  bound(
    'maxProperties',
    'object',
    'MAX_PROPERTIES_ADDED',
    'MAX_PROPERTIES_REMOVED',
    'MAX_PROPERTIES_INCREASED',
    'MAX_PROPERTIES_DECREASED',
  ),
  bound(
    'minProperties',
    'object',
    'MIN_PROPERTIES_ADDED',
    'MIN_PROPERTIES_REMOVED',
    'MIN_PROPERTIES_INCREASED',
    'MIN_PROPERTIES_DECREASED',
  ),
  bound(
    'maxItems',
    'array',
    'MAX_ITEMS_ADDED',
    'MAX_ITEMS_REMOVED',
    'MAX_ITEMS_INCREASED',
    'MAX_ITEMS_DECREASED',
  ),
  bound(
    'minItems',
    'array',
    'MIN_ITEMS_ADDED',
    'MIN_ITEMS_REMOVED',
    'MIN_ITEMS_INCREASED',
    'MIN_ITEMS_DECREASED',
  ),
  bound(
    'maxContains',
    'array',
    'MAX_CONTAINS_ADDED',
    'MAX_CONTAINS_REMOVED',
    'MAX_CONTAINS_INCREASED',
    'MAX_CONTAINS_DECREASED',
  ),
  bound(
    'minContains',
    'array',
    'MIN_CONTAINS_ADDED',
    'MIN_CONTAINS_REMOVED',
    'MIN_CONTAINS_INCREASED',
    'MIN_CONTAINS_DECREASED',
  ),
];

const NUMBER_RANGE_KEYWORDS = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
]);

type ReadLimit = (keywords: Shape['keywords'], keyword: string) => number | undefined;

const asWritten: ReadLimit = (keywords, keyword) => number(keywords[keyword]);

/**
 * As Confluent's loaders read the limits: its 2020-12 loader gives `contains` its default
 * `minContains` of 1 (so adding `contains` adds a floor, and `[]` no longer passes).
 * `exclusiveMaximum` is left to compareConfluentExclusiveMaximum.
 */
function confluentLimits(original: Shape): ReadLimit {
  const withContains = original.at.doc.dialect === '2020-12';
  return (keywords, keyword) => {
    if (keyword === 'exclusiveMaximum') return undefined;
    const value = number(keywords[keyword]);
    if (keyword === 'minContains' && withContains && keywords['contains'] !== undefined)
      return value ?? 1;
    return value;
  };
}

/**
 * `exclusiveMaximum` as Confluent compares it (json-schema-provider,
 * io/confluent/kafka/schemaregistry/json/diff/NumberSchemaDiff.java): added, removed and raised
 * are reported as written, but a lowered one is EXCLUSIVE_MAXIMUM_DECREASED only when the old
 * exclusive limit is above the update's `maximum` — the rule compares it with the new `maximum`,
 * not with the new exclusive limit. So lowering it beside a higher `maximum` goes unseen (class
 * G), and beside a lower one it is reported although no value changed its verdict. With no
 * `maximum` in the update that comparison throws (a NullPointerException, so the registry
 * answers with an error and registers nothing); evgen reports the decrease, the same refusal.
 */
function compareConfluentExclusiveMaximum(ctx: DiffContext, original: Shape, update: Shape): void {
  if (original.kind !== 'number') return;
  const rule = BOUND_KEYWORDS.find((candidate) => candidate.keyword === 'exclusiveMaximum')!;
  const before = number(original.keywords['exclusiveMaximum']);
  const after = number(update.keywords['exclusiveMaximum']);
  if (before === after) return;
  if (before === undefined) ctx.add(rule.added, rule.keyword);
  else if (after === undefined) ctx.add(rule.removed, rule.keyword);
  else if (before < after) ctx.add(rule.increased, rule.keyword);
  else {
    const updateMaximum = number(update.keywords['maximum']);
    if (updateMaximum === undefined || before > updateMaximum)
      ctx.add(rule.decreased, rule.keyword);
  }
}

/** Floors of 0 that constrain nothing (`minLength: 0` is no limit at all). */
const NO_OP_ZERO = new Set(['minLength', 'minItems', 'minProperties']);

/**
 * By meaning: a floor of 0 is no limit, and `minContains` defaults to 1 beside `contains`, so
 * adding `minLength: 0` or `minContains: 1` changes nothing. (Where only one side has `contains`,
 * the change is `contains`' own, judged with it.)
 */
const byMeaning =
  (bothContain: boolean): ReadLimit =>
  (keywords, keyword) => {
    const value = number(keywords[keyword]);
    if (NO_OP_ZERO.has(keyword) && value === 0) return undefined;
    if (keyword === 'minContains' && bothContain) return value ?? 1;
    return value;
  };

/** Keyword by keyword, numbers only: Confluent ignores the draft-04 boolean exclusive bounds. */
function compareWritten(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  only?: Set<string>,
  read: ReadLimit = asWritten,
): void {
  for (const rule of BOUND_KEYWORDS) {
    if (rule.kind !== original.kind) continue;
    if (only !== undefined && !only.has(rule.keyword)) continue;
    const before = read(original.keywords, rule.keyword);
    const after = read(update.keywords, rule.keyword);
    if (before === after) continue;
    if (before === undefined) ctx.add(rule.added, rule.keyword);
    else if (after === undefined) ctx.add(rule.removed, rule.keyword);
    else ctx.add(before < after ? rule.increased : rule.decreased, rule.keyword);
  }
}

/** The tightest limit on one side of a number range, whichever keywords state it. */
interface Limit {
  readonly value: number;
  readonly exclusive: boolean;
}

function limitOf(keywords: Shape['keywords'], side: 'minimum' | 'maximum'): Limit | undefined {
  const exclusiveKeyword = side === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum';
  const inclusiveValue = number(keywords[side]);
  const exclusiveValue =
    keywords[exclusiveKeyword] === true ? inclusiveValue : number(keywords[exclusiveKeyword]);
  const candidates: Limit[] = [];
  // Draft-04: `exclusiveMinimum: true` makes `minimum` itself exclusive.
  if (inclusiveValue !== undefined && keywords[exclusiveKeyword] !== true)
    candidates.push({ value: inclusiveValue, exclusive: false });
  if (exclusiveValue !== undefined) candidates.push({ value: exclusiveValue, exclusive: true });
  const tighter = (a: Limit, b: Limit) => (tightness(side, a, b) >= 0 ? a : b);
  return candidates.reduce<Limit | undefined>(
    (best, candidate) => (best === undefined ? candidate : tighter(best, candidate)),
    undefined,
  );
}

/** > 0 when `a` admits fewer numbers than `b`, 0 when the same, < 0 when more. */
function tightness(side: 'minimum' | 'maximum', a: Limit, b: Limit): number {
  if (a.value !== b.value) return side === 'minimum' ? a.value - b.value : b.value - a.value;
  return Number(a.exclusive) - Number(b.exclusive);
}

/**
 * By meaning (policy `evgen`): a lower or upper limit is compared as one limit, however it is
 * written, so `minimum: 10, exclusiveMinimum: true` (draft-04) → `minimum: 10` widens (compatible)
 * and the reverse narrows.
 */
function compareRange(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  side: 'minimum' | 'maximum',
): void {
  const before = limitOf(original.keywords, side);
  const after = limitOf(update.keywords, side);
  const exclusiveKeyword = side === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum';
  const rule = (exclusive: boolean) =>
    BOUND_KEYWORDS.find(
      (candidate) => candidate.keyword === (exclusive ? exclusiveKeyword : side),
    )!;
  if (before === undefined && after === undefined) return;
  if (before === undefined) {
    const added = rule(after!.exclusive);
    ctx.add(added.added, added.keyword);
    return;
  }
  if (after === undefined) {
    const removed = rule(before.exclusive);
    ctx.add(removed.removed, removed.keyword);
    return;
  }
  const change = tightness(side, after, before);
  if (change === 0) return;
  if (after.value === before.value) {
    // Only the exclusivity changed: gained it narrows, lost it widens.
    const exclusive = rule(true);
    ctx.add(after.exclusive ? exclusive.added : exclusive.removed, exclusive.keyword);
    return;
  }
  const changed = rule(after.exclusive);
  const narrowed = change > 0;
  // A lower limit narrows when it increases; an upper limit when it decreases.
  const increased = side === 'minimum' ? narrowed : !narrowed;
  ctx.add(increased ? changed.increased : changed.decreased, changed.keyword);
}

export const numericBoundsRule: ShapeRule = {
  id: 'numeric-bounds',
  purpose:
    'Every numeric limit (length, value, property and item counts, contains counts): a ceiling loosens when it rises, a floor when it falls; adding one tightens.',
  emits: BOUND_KEYWORDS.flatMap((bound) => [
    bound.added,
    bound.removed,
    bound.increased,
    bound.decreased,
  ]),
  kinds: ['string', 'number', 'object', 'array'],
  compare(ctx, original, update) {
    if (ctx.reading === 'confluent') {
      compareWritten(ctx, original, update, undefined, confluentLimits(original));
      compareConfluentExclusiveMaximum(ctx, original, update);
      return;
    }
    if (original.kind !== 'number') {
      const bothContain =
        original.keywords['contains'] !== undefined && update.keywords['contains'] !== undefined;
      compareWritten(ctx, original, update, undefined, byMeaning(bothContain));
      return;
    }
    compareRange(ctx, original, update, 'minimum');
    compareRange(ctx, original, update, 'maximum');
    const others = new Set(
      BOUND_KEYWORDS.map((rule) => rule.keyword).filter(
        (keyword) => !NUMBER_RANGE_KEYWORDS.has(keyword),
      ),
    );
    compareWritten(ctx, original, update, others);
  },
};
