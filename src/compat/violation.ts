/** One reason a catalog change is not allowed, as reported by `evgen check`. */
import type { CompatibilityMode, CompatibilityPolicy } from '../catalog/model.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { Direction } from './modes.js';
import { compareStrings } from '../common/json-value.js';

/**
 * Which side must be deployed first for the change to be safe: `consumers` when only backward
 * compatibility holds (new readers read old data), `producers` when only forward compatibility
 * holds (old readers read new data), `none` when no order is safe.
 */
export type DeployOrder = 'consumers' | 'producers' | 'none';

export const IMMUTABILITY_RULES = ['RELEASED_VERSION_CHANGED', 'RELEASED_VERSION_DELETED'] as const;

/**
 * A diagnostic (`file`: the schema file; `pointer`: inside it, "" = whole schema; `code`: a
 * Confluent difference type or one of IMMUTABILITY_RULES) with what the check compared.
 */
export interface CompatibilityViolation extends Diagnostic {
  /** The same place as a fragment, Confluent style: `#/properties/foo`. */
  readonly path: string;
  readonly deployFirst: DeployOrder;
  readonly eventType: string;
  readonly version: number;
  /** The earlier version it was compared with (absent for immutability rules). */
  readonly against?: number;
  readonly direction?: Direction;
  readonly mode: CompatibilityMode;
  readonly policy: CompatibilityPolicy;
}

/**
 * What the deploy order means for a violation. Without a mode: the order alone. With the event's
 * mode: a violation means that mode forbids the change whatever the order, so the text says so
 * and names the mode under which the order would make it safe.
 */
export function deployOrderText(order: DeployOrder, mode?: CompatibilityMode): string {
  const weaker = (direction: 'BACKWARD' | 'FORWARD') =>
    mode?.endsWith('_TRANSITIVE') === true ? `${direction}_TRANSITIVE` : direction;
  switch (order) {
    case 'consumers':
      return mode === undefined
        ? 'deploy consumers first (the change is backward-compatible only)'
        : `no order makes it allowed under ${mode}: the change is backward-compatible only (with compatibility ${weaker('BACKWARD')} it would pass, deploying consumers first)`;
    case 'producers':
      return mode === undefined
        ? 'deploy producers first (the change is forward-compatible only)'
        : `no order makes it allowed under ${mode}: the change is forward-compatible only (with compatibility ${weaker('FORWARD')} it would pass, deploying producers first)`;
    case 'none':
      return 'no deploy order is safe';
  }
}

/** Stable order: file, pointer, rule, compared version, direction. */
export function compareViolations(a: CompatibilityViolation, b: CompatibilityViolation): number {
  return (
    compareStrings(a.file, b.file) ||
    compareStrings(a.path, b.path) ||
    compareStrings(a.code, b.code) ||
    (a.against ?? 0) - (b.against ?? 0) ||
    compareStrings(a.direction ?? '', b.direction ?? '')
  );
}
