/**
 * What to tell a person about a violation, as data: a readable description per difference type
 * (seen from the direction that failed) and a one-line hint on how to make the change compatible.
 * The first matching entry wins; the last entry catches everything.
 */
import { unescapeSegment } from '../../common/json-pointer.js';
import type { Direction } from '../modes.js';

interface HintRule {
  readonly types: RegExp;
  /** Only for this direction (backward: new reader/old data; forward: old reader/new data). */
  readonly direction?: Direction;
  /** `{name}` is replaced by the property name (or the path when there is none). */
  readonly describe: string;
  readonly hint: string;
}

export const HINT_RULES: readonly HintRule[] = [
  {
    types: /^REQUIRED_(PROPERTY|ATTRIBUTE)_ADDED/,
    direction: 'backward',
    describe: 'required property {name} was added; data written before it has no such field',
    hint: 'make {name} optional, or give it a default',
  },
  {
    types: /^REQUIRED_(PROPERTY|ATTRIBUTE)_ADDED/,
    direction: 'forward',
    describe: 'property {name} is required by the older version but no longer always sent',
    hint: 'keep sending {name} (keep it required) until no consumer on the older version remains, or add a new event type',
  },
  {
    types: /^ENUM_ARRAY_(NARROWED|CHANGED)$/,
    direction: 'backward',
    describe: 'allowed values of {name} were removed; older data may carry them',
    hint: 'keep every value ever written (deprecate it in the description instead of removing it)',
  },
  {
    types: /^ENUM_ARRAY_(NARROWED|CHANGED)$/,
    direction: 'forward',
    describe: 'new values of {name} were added; consumers on the older version reject them',
    hint: 'deploy consumers that accept the new values first (this needs a BACKWARD mode), or add a new event version/type',
  },
  {
    types:
      /^(TYPE_CHANGED|TYPE_NARROWED|COMBINED_TYPE_CHANGED|COMBINED_TYPE_SUBSCHEMAS_CHANGED|SUM_TYPE_NARROWED|PRODUCT_TYPE_EXTENDED|NOT_TYPE_EXTENDED)$/,
    describe: 'the type of {name} changed incompatibly ({type})',
    hint: 'keep the old type; add a new property with the new type, or publish a new event version/type',
  },
  {
    types: /^(OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL|PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL)$/,
    describe:
      'property {name} was added to an open content model, where older data may already carry {name} with any value',
    hint: 'close the object (additionalProperties: false) in every version, or use the evgen or confluent-lenient policy',
  },
  {
    types:
      /^(PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL|PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL)$/,
    direction: 'forward',
    describe:
      'property {name} was added, and the older version (a closed content model) rejects it',
    hint: 'deploy consumers first (needs a BACKWARD mode), or use the evgen policy (its readers ignore unknown properties)',
  },
  {
    types:
      /^(PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL|PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL|PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL)$/,
    describe: 'property {name} was removed from or added to a closed content model ({type})',
    hint: 'keep the property declared (optional, deprecated), or allow extras with additionalProperties',
  },
  {
    types: /^(ITEM_|ADDITIONAL_ITEMS_|UNEVALUATED_ITEMS_)/,
    describe: 'the items of {name} changed incompatibly ({type})',
    hint: 'keep tuple positions and item rules as they were; add a new property for the new shape',
  },
  {
    types: /^(ADDITIONAL_PROPERTIES_|UNEVALUATED_PROPERTIES_)/,
    describe: 'which extra properties {name} accepts became stricter ({type})',
    hint: 'keep accepting what was accepted before, or publish a new event version/type',
  },
  {
    types: /^(DEPENDENCY_)/,
    describe: 'a property dependency of {name} became stricter ({type})',
    hint: 'do not add dependencies between released properties; validate the rule in the producer instead',
  },
  {
    types: /^SCHEMA_ADDED$/,
    describe: 'a constraint on {name} was added where anything was accepted',
    hint: 'do not constrain released data; add a new property instead',
  },
  {
    types: /_(ADDED|INCREASED|DECREASED|CHANGED|EXPANDED)$/,
    describe: 'a constraint on {name} became stricter ({type})',
    hint: 'do not tighten constraints on released data; enforce the stricter rule in the producer, or add a new event version',
  },
  {
    types: /^RESERVED_PROPERTY_(CONFLICTS_WITH_PROPERTY|REMOVED)$/,
    describe: 'reserved property {name} was declared or un-reserved ({type})',
    hint: 'keep reserved names reserved; pick a new name for the new property',
  },
  {
    types:
      /^REQUIRED_(PROPERTY_WITH_DEFAULT_ADDED_TO_(OPEN|UNOPEN)_CONTENT_MODEL|ATTRIBUTE_REMOVED)$/,
    describe:
      'whether {name} is required changed ({type}); data written with the other version may lack it or carry any value',
    hint: 'close the object (additionalProperties: false) before relying on a default, or keep {name} as it was',
  },
  {
    types:
      /^(PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL|PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL|PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL|PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL|PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL|OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL)$/,
    describe: 'property {name} was added or removed where extras are still read ({type})',
    hint: 'no action needed under STRICT; under a stricter custom policy keep the property declared (optional, deprecated)',
  },
  {
    types:
      /^(COMBINED_TYPE_EXTENDED|SUM_TYPE_EXTENDED|TYPE_EXTENDED|PRODUCT_TYPE_NARROWED|NOT_TYPE_NARROWED|ENUM_ARRAY_EXTENDED|SCHEMA_REMOVED)$/,
    describe: 'the accepted values of {name} were widened ({type})',
    hint: 'readers of the other version may meet values they do not accept: deploy readers of the wider version first',
  },
  {
    types: /^(.*_REMOVED|MULTIPLE_OF_REDUCED)$/,
    describe: 'a constraint on {name} was loosened ({type})',
    hint: 'older readers still enforce it: deploy readers before writers that rely on the looser rule',
  },
  {
    types: /.*/,
    describe: '{name}: {type}',
    hint: 'revert this change, or publish it as a new event version/type',
  },
];

const KEYWORD_SEGMENTS = new Set([
  'enum',
  'const',
  'pattern',
  'not',
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'uniqueItems',
  'multipleOf',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minContains',
  'maxContains',
]);

/** The property (or position) a path points at: `#/properties/a/properties/b` → `b`. */
export function subjectOf(path: string): string {
  const segments = path
    .replace(/^#\/?/, '')
    .split('/')
    .filter((segment) => segment !== '');
  // `#/properties/channel/enum` is about `channel`: drop trailing keywords.
  while (segments.length > 0 && KEYWORD_SEGMENTS.has(segments[segments.length - 1]!))
    segments.pop();
  const last = segments[segments.length - 1];
  if (last === undefined) return 'the payload';
  return `"${unescapeSegment(last)}"`;
}

export function explain(
  type: string,
  path: string,
  direction: Direction,
): { description: string; hint: string } {
  const rule = HINT_RULES.find(
    (candidate) =>
      candidate.types.test(type) &&
      (candidate.direction === undefined || candidate.direction === direction),
  )!;
  const fill = (text: string) =>
    text.replace(/\{name\}/g, subjectOf(path)).replace(/\{type\}/g, type);
  return { description: fill(rule.describe), hint: fill(rule.hint) };
}
