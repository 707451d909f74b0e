/**
 * By meaning (policy `evgen`), a combination can also be read part by part, with the rules of
 * set inclusion: the writer's values W must all be in the reader's R.
 * - W = anyOf/oneOf(P…): every P ⊆ R (a oneOf accepts no more than the anyOf of its branches).
 * - R = allOf(Q…): W ⊆ every Q.
 * - W = allOf(P…): some P ⊆ R suffices (the other conjuncts only narrow what was written).
 * - R = anyOf(Q…): some Q ⊇ W suffices.
 * Confluent's matching of subschemas one to one misses these whenever the two sides are split
 * differently, e.g. the writer view closes a union with `properties` + `additionalProperties`
 * beside it (a synthetic allOf) while the reader view is the bare union.
 */
import type { CompareSchemas } from './rules/shape-rule.js';
import type { DiffContext } from './diff-context.js';
import { DifferenceList } from './difference-list.js';
import type { SchemaNode } from './schema-document.js';
import type { Shape } from './schema-shape.js';

/** Differences of `pairs` when every pair is compatible; undefined otherwise. */
function all(
  ctx: DiffContext,
  pairs: readonly (readonly [SchemaNode, SchemaNode])[],
  compareSchemas: CompareSchemas,
): DifferenceList | undefined {
  // Any pair a tag value tells apart fails the whole conjunction before anything is compared.
  if (pairs.some(([writer, reader]) => ctx.cannotRead(writer, reader))) return undefined;
  const found = new DifferenceList(ctx.compatibleTypes);
  for (const [writer, reader] of pairs) {
    const trial = ctx.sub();
    compareSchemas(trial, writer, reader);
    if (!trial.isCompatible()) return undefined;
    found.link(trial.differences, '', false);
  }
  return found;
}

/** Differences of the first compatible pair; undefined when none is. */
function some(
  ctx: DiffContext,
  pairs: readonly (readonly [SchemaNode, SchemaNode])[],
  compareSchemas: CompareSchemas,
): DifferenceList | undefined {
  for (const pair of pairs) {
    const found = all(ctx, [pair], compareSchemas);
    if (found !== undefined) return found;
  }
  return undefined;
}

const isUnion = (shape: Shape) => shape.criterion === 'anyOf' || shape.criterion === 'oneOf';

export interface PartsReading {
  /** Which side was split into parts. */
  readonly split: 'writer' | 'reader';
  readonly differences: DifferenceList;
}

/**
 * Tries the rules above, exact ones first (they lose nothing); returns the differences of the
 * first that proves the pair compatible, or undefined.
 */
export function readByParts(
  ctx: DiffContext,
  original: Shape,
  update: Shape,
  compareSchemas: CompareSchemas,
): PartsReading | undefined {
  const writerParts = original.kind === 'combined' ? (original.subschemas ?? []) : [];
  const readerParts = update.kind === 'combined' ? (update.subschemas ?? []) : [];
  const writerPairs = writerParts.map((part) => [part, update.at] as const);
  const readerPairs = readerParts.map((part) => [original.at, part] as const);
  const attempts: [PartsReading['split'], () => DifferenceList | undefined][] = [];
  if (writerParts.length > 0 && isUnion(original))
    attempts.push(['writer', () => all(ctx, writerPairs, compareSchemas)]);
  if (readerParts.length > 0 && update.criterion === 'allOf')
    attempts.push(['reader', () => all(ctx, readerPairs, compareSchemas)]);
  if (writerParts.length > 0 && original.criterion === 'allOf')
    attempts.push(['writer', () => some(ctx, writerPairs, compareSchemas)]);
  // Only anyOf: a reader's oneOf also rejects a value that two branches accept.
  if (readerParts.length > 0 && (update.criterion === 'anyOf' || readerParts.length === 1))
    attempts.push(['reader', () => some(ctx, readerPairs, compareSchemas)]);
  for (const [split, attempt] of attempts) {
    const differences = attempt();
    if (differences !== undefined) return { split, differences };
  }
  return undefined;
}
