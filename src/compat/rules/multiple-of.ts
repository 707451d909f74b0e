/**
 * `multipleOf`: a new divisor that divides the old one accepts every old value (reduced); a
 * multiple of the old one rejects some (expanded); anything else changes the set.
 */
import type { ShapeRule } from './shape-rule.js';

/** `a` is an integer multiple of `b`, tolerant of binary fractions (0.1, 0.01 …). */
function isMultiple(a: number, b: number): boolean {
  const ratio = a / b;
  return Math.abs(ratio - Math.round(ratio)) < 1e-9 * Math.max(1, Math.abs(ratio));
}

export const multipleOfRule: ShapeRule = {
  id: 'multiple-of',
  purpose:
    '`multipleOf` added, removed, or changed to a divisor (looser) or a multiple (stricter) of the old one.',
  emits: [
    'MULTIPLE_OF_ADDED',
    'MULTIPLE_OF_REMOVED',
    'MULTIPLE_OF_EXPANDED',
    'MULTIPLE_OF_REDUCED',
    'MULTIPLE_OF_CHANGED',
  ],
  kinds: ['number'],
  compare(ctx, original, update) {
    const before = original.keywords['multipleOf'];
    const after = update.keywords['multipleOf'];
    const a = typeof before === 'number' ? before : undefined;
    const b = typeof after === 'number' ? after : undefined;
    if (a === b) return;
    if (a === undefined) ctx.add('MULTIPLE_OF_ADDED', 'multipleOf');
    else if (b === undefined) ctx.add('MULTIPLE_OF_REMOVED', 'multipleOf');
    else if (isMultiple(b, a)) ctx.add('MULTIPLE_OF_EXPANDED', 'multipleOf');
    else if (isMultiple(a, b)) ctx.add('MULTIPLE_OF_REDUCED', 'multipleOf');
    else ctx.add('MULTIPLE_OF_CHANGED', 'multipleOf');
  },
};
