/**
 * Compatibility modes (Confluent's names): which directions a new version must satisfy, and
 * against which earlier versions. BACKWARD: new readers read old data. FORWARD: old readers
 * read new data. FULL: both. *_TRANSITIVE: against every earlier version, not only the previous.
 */
import type { CompatibilityMode } from '../catalog/model.js';

export type Direction = 'backward' | 'forward';

export interface ModeDefinition {
  readonly directions: readonly Direction[];
  readonly transitive: boolean;
}

export const MODES: Readonly<Record<CompatibilityMode, ModeDefinition>> = {
  BACKWARD: { directions: ['backward'], transitive: false },
  BACKWARD_TRANSITIVE: { directions: ['backward'], transitive: true },
  FORWARD: { directions: ['forward'], transitive: false },
  FORWARD_TRANSITIVE: { directions: ['forward'], transitive: true },
  FULL: { directions: ['backward', 'forward'], transitive: false },
  FULL_TRANSITIVE: { directions: ['backward', 'forward'], transitive: true },
  NONE: { directions: [], transitive: false },
};

/** Earlier versions (ascending numbers) a new version is checked against under `mode`. */
export function versionsToCheckAgainst<T>(
  earlier: readonly T[],
  mode: CompatibilityMode,
): readonly T[] {
  const definition = MODES[mode];
  if (definition.directions.length === 0 || earlier.length === 0) return [];
  return definition.transitive ? earlier : earlier.slice(-1);
}
