/**
 * Every compatibility rule with its metadata (id, purpose, the difference types it reports), and
 * the Confluent difference types no rule reports, with why. Together they name all 132 types; a
 * test keeps it that way and checks each rule's file names exactly the types the rule declares.
 */
import { SCHEMA_WALK_RULE } from './compare-schemas.js';
import type { DifferenceType } from './rules/difference-types.js';
import { SHAPE_RULES } from './rules/index.js';
import type { RuleInfo } from './rules/shape-rule.js';
import { MEANING_ONLY_KEYWORDS_RULE } from './unshaped-keywords.js';

export const COMPAT_RULES: readonly RuleInfo[] = [
  SCHEMA_WALK_RULE,
  MEANING_ONLY_KEYWORDS_RULE,
  ...SHAPE_RULES,
];

/**
 * Confluent reports these from a subject's registry metadata (`confluent:reserved` property
 * names), not from the schema document; evgen's catalog has no such metadata, so they never occur.
 */
export const NOT_REPORTED: Readonly<Partial<Record<DifferenceType, string>>> = {
  RESERVED_PROPERTY_CONFLICTS_WITH_PROPERTY:
    'reserved property names come from Schema Registry metadata, which evgen catalogs do not have',
  RESERVED_PROPERTY_REMOVED:
    'reserved property names come from Schema Registry metadata, which evgen catalogs do not have',
};
