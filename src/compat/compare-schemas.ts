/**
 * The walk: compares two schema nodes and records differences in the context. Decides only what
 * needs both shapes at once (absent schemas, kind changes, a plain schema against a combined
 * one); everything keyword-specific is a rule in `rules/`.
 */
import type { DiffContext } from './diff-context.js';
import { canonicalJson } from './canonical-json.js';
import { readByParts } from './read-by-parts.js';
import {
  compareUnshapedKeywords,
  refusedReferenceConditions,
  refusedReferenceSiblings,
} from './unshaped-keywords.js';
import { compareCombined } from './rules/combined.js';
import { SHAPE_RULES } from './rules/index.js';
import type { CompareSchemas, RuleInfo } from './rules/shape-rule.js';
import { followReferences, shapeOf, type CombinedCriterion, type Shape } from './schema-shape.js';

/** What the walk itself reports, beside the keyword rules. */
export const SCHEMA_WALK_RULE: RuleInfo = {
  id: 'schema-walk',
  purpose:
    'A schema present on one side only, a change of kind (string → object, …), a plain schema against a combined one (a union that still has a fitting alternative, an allOf with a fitting conjunct), and a const against an enum compared by their values.',
  emits: [
    'SCHEMA_ADDED',
    'SCHEMA_REMOVED',
    'TYPE_CHANGED',
    'SUM_TYPE_EXTENDED',
    'PRODUCT_TYPE_NARROWED',
    'ENUM_ARRAY_CHANGED',
    'ENUM_ARRAY_NARROWED',
    'ENUM_ARRAY_EXTENDED',
  ],
};

export const compareSchemas: CompareSchemas = (ctx, original, update) => {
  if (original === undefined && update === undefined) return;
  if (original === undefined) {
    ctx.add('SCHEMA_ADDED');
    return;
  }
  if (update === undefined) {
    ctx.add('SCHEMA_REMOVED');
    return;
  }
  if (ctx.reading !== 'confluent' && refusedReferenceConditions(ctx, original, update)) return;
  const from = ctx.locating(() => followReferences(original));
  const to = ctx.locating(() => followReferences(update));
  ctx.memoized(from, to, (pairCtx) => comparePair(pairCtx, shapeOf(from), shapeOf(to)));
};

function comparePair(ctx: DiffContext, original: Shape, update: Shape): void {
  if (ctx.reading === 'confluent') {
    compareShapes(ctx, original, update);
    return;
  }
  // Keywords of the whole schema objects, once per such pair (facets of one object share them).
  if (update.at.facet === undefined && refusedReferenceSiblings(ctx, original.at, update.at))
    return;
  const whole = ctx.sub();
  if (update.at.facet === undefined)
    compareUnshapedKeywords(whole, original.at, update.at, compareSchemas);
  // Also for one facet of a reader with a `type`: `{"anyOf": [{"minimum": -5}]}` →
  // `{…, "type": "number"}` pairs the writer's member with the reader's `type` facet.
  if (acceptsOtherTypes(original) && hasType(update)) whole.add('TYPE_CHANGED');
  const trial = ctx.sub();
  if (!compareValueSets(trial, original, update)) compareShapes(trial, original, update);
  if (whole.isCompatible() && trial.isCompatible()) {
    ctx.addAll(whole.differences);
    ctx.addAll(trial.differences);
    return;
  }
  // When Confluent's pairing of subschemas fails, set inclusion part by part may still prove it.
  const parts =
    original.kind === 'combined' || update.kind === 'combined'
      ? readByParts(ctx, original, update, compareSchemas)
      : undefined;
  // Split on the writer's side, every part met the whole reader (and its keywords); split on the
  // reader's side, the parts are its facets, so the whole reader's keywords still count.
  if (parts?.split !== 'writer') ctx.addAll(whole.differences);
  ctx.addAll(parts?.differences ?? trial.differences);
}

/**
 * A schema object whose kind is only inferred from its keywords (`{"minLength": 2}` is read as a
 * string schema) still accepts every value of another type; a reader with a `type` does not.
 */
function acceptsOtherTypes(shape: Shape): boolean {
  return ['string', 'number', 'object', 'array'].includes(shape.kind) && !hasType(shape);
}

/**
 * By meaning, a reader whose kind is only inferred from its keywords (`{"minLength": 1}`) accepts
 * every value of another type: a writer of one other type (`{"type": "boolean"}`) is read whole.
 */
function readsOtherType(original: Shape, update: Shape): boolean {
  const typed = ['null', 'boolean', 'string', 'number', 'object', 'array'];
  return (
    acceptsOtherTypes(update) &&
    typed.includes(original.kind) &&
    (hasType(original) || original.kind === 'null' || original.kind === 'boolean')
  );
}

function hasType(shape: Shape): boolean {
  const value = shape.at.value;
  return typeof value === 'object' && value !== null && 'type' in value;
}

/**
 * By meaning, `const: x` is `enum: [x]`: a const and an enum compare as value sets (reported at
 * the reader's keyword). False when the pair is not a const/enum mix.
 */
function compareValueSets(ctx: DiffContext, original: Shape, update: Shape): boolean {
  const valued = (shape: Shape) => shape.kind === 'const' || shape.kind === 'enum';
  if (!valued(original) || !valued(update) || original.kind === update.kind) return false;
  const values = (shape: Shape) =>
    new Set(
      (shape.kind === 'const'
        ? [shape.keywords['const']]
        : Array.isArray(shape.keywords['enum'])
          ? shape.keywords['enum']
          : []
      ).map(canonicalJson),
    );
  const before = values(original);
  const after = values(update);
  const lost = [...before].some((value) => !after.has(value));
  const gained = [...after].some((value) => !before.has(value));
  const at = update.kind;
  if (lost && gained) ctx.add('ENUM_ARRAY_CHANGED', at);
  else if (lost) ctx.add('ENUM_ARRAY_NARROWED', at);
  else if (gained) ctx.add('ENUM_ARRAY_EXTENDED', at);
  return true;
}

function compareShapes(ctx: DiffContext, original: Shape, update: Shape): void {
  if (original.kind !== 'combined' && update.kind === 'combined') {
    if (plainAgainstCombined(ctx, original, update)) return;
  } else if (original.kind === 'combined' && update.kind !== 'combined') {
    if (combinedAgainstPlain(ctx, original, update)) return;
  }

  if (original.kind !== update.kind) {
    if (ctx.reading === 'confluent' && isConnectBytesNumber(original, update)) return;
    if (ctx.reading === 'meaning' && readsOtherType(original, update)) return;
    // Nothing can be written with `false`, and `{}`/`true` reads everything.
    if (original.kind !== 'false' && update.kind !== 'empty') ctx.add('TYPE_CHANGED');
    return;
  }
  for (const rule of SHAPE_RULES) {
    if (rule.kinds === 'all' || rule.kinds.includes(original.kind))
      rule.compare(ctx, original, update, compareSchemas);
  }
}

/**
 * Kafka Connect writes a decimal as bytes (a base64 string) or as a number, annotated
 * `connect.type: bytes` either way; Confluent's checker lets the two replace each other.
 */
function isConnectBytesNumber(original: Shape, update: Shape): boolean {
  const kinds = new Set([original.kind, update.kind]);
  return (
    kinds.has('string') &&
    kinds.has('number') &&
    original.keywords['connect.type'] === 'bytes' &&
    update.keywords['connect.type'] === 'bytes'
  );
}

/** A plain schema became a union: compatible when one alternative reads what it allowed. */
function plainAgainstCombined(ctx: DiffContext, original: Shape, update: Shape): boolean {
  const alternatives = update.subschemas ?? [];
  if (alternatives.length === 1) {
    const trial = ctx.sub();
    compareSchemas(trial, original.at, alternatives[0]);
    if (trial.isCompatible()) {
      ctx.addAll(trial.differences);
      return true;
    }
    return false;
  }
  if (update.criterion === 'anyOf' || update.criterion === 'oneOf') {
    for (const alternative of alternatives) {
      if (ctx.cannotRead(original.at, alternative)) continue;
      const trial = ctx.sub();
      compareSchemas(trial, original.at, alternative);
      if (trial.isCompatible()) {
        ctx.addAll(trial.differences);
        ctx.add('SUM_TYPE_EXTENDED');
        return true;
      }
    }
    return false;
  }
  // A schema object that gained a facet (`type` → `type` + `enum`): compare facet by facet
  // (→ PRODUCT_TYPE_EXTENDED). A written allOf of several schemas is a kind change, as in Confluent.
  // `false` allowed nothing, so nothing can break (handled as a kind change below).
  if (update.synthetic !== true || original.kind === 'false') return false;
  compareCombined(ctx, asSingleton(original, 'allOf'), update, compareSchemas);
  return true;
}

/**
 * A combination became one plain schema. A singleton is its member; an allOf is read by the plain
 * schema when one conjunct alone is (the others only narrowed what was written: PRODUCT_TYPE_NARROWED).
 * Anything else is a kind change, as in Confluent: a union is not narrowed member by member here.
 */
function combinedAgainstPlain(ctx: DiffContext, original: Shape, update: Shape): boolean {
  if (update.kind === 'empty') return false;
  const parts = original.subschemas ?? [];
  if (parts.length === 1) {
    const trial = ctx.sub();
    compareSchemas(trial, parts[0], update.at);
    if (trial.isCompatible()) {
      ctx.addAll(trial.differences);
      return true;
    }
    return false;
  }
  if (original.criterion !== 'allOf') return false;
  for (const part of parts) {
    if (ctx.cannotRead(part, update.at)) continue;
    const trial = ctx.sub();
    compareSchemas(trial, part, update.at);
    if (trial.isCompatible()) {
      ctx.addAll(trial.differences);
      ctx.add('PRODUCT_TYPE_NARROWED');
      return true;
    }
  }
  return false;
}

function asSingleton(shape: Shape, criterion: CombinedCriterion): Shape {
  return {
    kind: 'combined',
    at: shape.at,
    keywords: shape.keywords,
    meta: shape.meta,
    criterion,
    synthetic: true,
    subschemas: [shape.at],
  };
}
