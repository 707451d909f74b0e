/**
 * Compatibility policies: which difference types a run accepts, and how the two schemas are
 * presented to the difference engine.
 * - `confluent`: Confluent Schema Registry STRICT (its default), schemas as written.
 * - `confluent-lenient`: Confluent LENIENT, schemas as written.
 * - `evgen`: STRICT verdicts (less the two a `default` excuses) on the writer schema closed and the
 *   reader schema open — the same views the generated validators enforce (src/schema/views.ts) —
 *   with keywords read by meaning (see diff-context.ts `Reading`).
 */
import type { CompatibilityPolicy } from '../catalog/model.js';
import { readerSchema, writerSchema } from '../schema/views.js';
import type { Reading } from './schema-document.js';
import {
  ALL_DIFFERENCE_TYPES,
  DIFFERENCE_TYPES,
  type DifferenceType,
} from './rules/difference-types.js';

export const STRICT_COMPATIBLE: ReadonlySet<DifferenceType> = new Set(
  ALL_DIFFERENCE_TYPES.filter((type) => DIFFERENCE_TYPES[type].strict),
);
export const LENIENT_COMPATIBLE: ReadonlySet<DifferenceType> = new Set(
  ALL_DIFFERENCE_TYPES.filter((type) => DIFFERENCE_TYPES[type].lenient),
);

export interface PolicyDefinition {
  readonly compatibleTypes: ReadonlySet<DifferenceType>;
  /** The writer's schema as the check sees it. */
  readonly writerView: (schema: unknown) => unknown;
  /** The reader's schema as the check sees it. */
  readonly readerView: (schema: unknown) => unknown;
  /** Confluent's reading of the keywords it ignores, or their meaning (see diff-context.ts). */
  readonly reading: Reading;
}

/**
 * STRICT minus what Confluent forgives because of a `default`: a property made required with a
 * default is compatible only for readers that fill defaults in. evgen's validators do not (they
 * check the payload as sent), so a writer that left the property out would be rejected.
 */
export const EVGEN_COMPATIBLE: ReadonlySet<DifferenceType> = new Set(
  [...STRICT_COMPATIBLE].filter(
    (type) =>
      type !== 'REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED' &&
      type !== 'REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL',
  ),
);

const asWritten = (schema: unknown) => schema;

export const POLICIES: Readonly<Record<CompatibilityPolicy, PolicyDefinition>> = {
  confluent: {
    compatibleTypes: STRICT_COMPATIBLE,
    writerView: asWritten,
    readerView: asWritten,
    reading: 'confluent',
  },
  'confluent-lenient': {
    compatibleTypes: LENIENT_COMPATIBLE,
    writerView: asWritten,
    readerView: asWritten,
    reading: 'confluent',
  },
  evgen: {
    compatibleTypes: EVGEN_COMPATIBLE,
    writerView: writerSchema,
    readerView: readerSchema,
    reading: 'meaning',
  },
};
