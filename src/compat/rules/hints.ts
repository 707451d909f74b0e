/**
 * What to tell a person about a violation, as data: what changed, said from the versions' point of
 * view, what that does to readers, and a one-line hint on how to make the change compatible.
 *
 * A difference is found comparing a writer (the schema data is written with) against a reader. In
 * the backward direction the writer is the old version and the reader the new one; forward, the
 * other way round, so a forward REQUIRED_PROPERTY_ADDED means the new version *removed* a required
 * property. Texts name the versions, never "original/update": `{new}`/`{old}` are the compared
 * versions, `{writer}`/`{reader}` their roles in the failed direction, `{name}` the property (or
 * position) and `{type}` the difference type. The first matching entry wins; the last one catches
 * everything (a test keeps every difference type away from it).
 */
import { unescapeSegment } from '../../common/json-pointer.js';
import type { CompatibilityPolicy } from '../../catalog/model.js';
import type { Direction } from '../modes.js';

/**
 * Which readers a hint may count on: `evgen` readers validate the payload as sent (a default
 * fills nothing in); Confluent's policies forgive a required property that has a default.
 */
export type HintAudience = 'evgen' | 'confluent';

export interface HintRule {
  readonly types: RegExp;
  /** Only for this direction (backward: new reader/old data; forward: old reader/new data). */
  readonly direction?: Direction;
  /** Only for these policies' readers (both when absent). */
  readonly audience?: HintAudience;
  /** What changed. */
  readonly describe: string;
  /** What it does to readers; the direction's generic sentence when absent. */
  readonly effect?: string;
  readonly hint: string;
}

export const HINT_RULES: readonly HintRule[] = [
  {
    types: /^REQUIRED_PROPERTY_ADDED_TO_(OPEN|UNOPEN)_CONTENT_MODEL$/,
    direction: 'backward',
    audience: 'evgen',
    describe: '{new} adds required property {name}',
    effect: 'data written with {old} does not have it',
    hint: 'make {name} optional (a default does not help: evgen readers fill nothing in), or add a new event type',
  },
  {
    types: /^REQUIRED_PROPERTY_ADDED_TO_(OPEN|UNOPEN)_CONTENT_MODEL$/,
    direction: 'backward',
    describe: '{new} adds required property {name}',
    effect: 'data written with {old} does not have it',
    hint: 'make {name} optional, or give it a default',
  },
  {
    types: /^REQUIRED_PROPERTY_ADDED_TO_(OPEN|UNOPEN)_CONTENT_MODEL$/,
    direction: 'forward',
    describe: '{new} removes required property {name}',
    effect: 'consumers still on {old} require it',
    hint: 'keep sending {name} (keep it required) until no consumer on {old} remains, or add a new event type',
  },
  {
    types: /^REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_(OPEN|UNOPEN)_CONTENT_MODEL$/,
    direction: 'backward',
    describe: '{new} adds required property {name} with a default',
    effect:
      'data written with {old} does not have it, and evgen readers fill in no default: they reject it',
    hint: 'make {name} optional (the default then only documents the value to assume)',
  },
  {
    types: /^REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_(OPEN|UNOPEN)_CONTENT_MODEL$/,
    direction: 'forward',
    describe: '{new} removes required property {name} (it had a default)',
    effect: 'consumers still on {old} require it',
    hint: 'keep sending {name} (keep it required) until no consumer on {old} remains, or add a new event type',
  },
  {
    types: /^REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED$/,
    direction: 'backward',
    describe: '{new} makes property {name} required (it has a default)',
    effect:
      'data written with {old} may not have it, and evgen readers fill in no default: they reject it',
    hint: 'keep {name} optional (the default then only documents the value to assume)',
  },
  {
    types: /^REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED$/,
    direction: 'forward',
    describe: '{new} makes required property {name} optional',
    effect: 'consumers still on {old} require it',
    hint: 'keep {name} required until no consumer on {old} remains, or add a new event type',
  },
  {
    types: /^REQUIRED_ATTRIBUTE_ADDED$/,
    direction: 'backward',
    audience: 'evgen',
    describe: '{new} makes property {name} required',
    effect: 'data written with {old} may not have it',
    hint: 'keep {name} optional (a default does not help: evgen readers fill nothing in)',
  },
  {
    types: /^REQUIRED_ATTRIBUTE_ADDED$/,
    direction: 'backward',
    describe: '{new} makes property {name} required',
    effect: 'data written with {old} may not have it',
    hint: 'keep {name} optional, or give it a default',
  },
  {
    types: /^REQUIRED_ATTRIBUTE_ADDED$/,
    direction: 'forward',
    describe: '{new} makes required property {name} optional',
    effect: 'consumers still on {old} require it',
    hint: 'keep {name} required until no consumer on {old} remains, or add a new event type',
  },
  {
    types: /^ENUM_ARRAY_(NARROWED|CHANGED)$/,
    direction: 'backward',
    describe: '{new} removes allowed values of {name}',
    effect: 'data written with {old} may carry them',
    hint: 'keep every value ever written (deprecate it in the description instead of removing it)',
  },
  {
    types: /^ENUM_ARRAY_(NARROWED|CHANGED)$/,
    direction: 'forward',
    describe: '{new} adds allowed values to {name}',
    effect: 'consumers still on {old} reject them',
    hint: 'deploy consumers that accept the new values first (this needs a BACKWARD mode), or add a new event version/type',
  },
  {
    types:
      /^(TYPE_CHANGED|TYPE_NARROWED|COMBINED_TYPE_CHANGED|COMBINED_TYPE_SUBSCHEMAS_CHANGED|SUM_TYPE_NARROWED|PRODUCT_TYPE_EXTENDED|NOT_TYPE_EXTENDED)$/,
    describe: '{new} changes the type of {name} ({type})',
    hint: 'keep the old type; add a new property with the new type, or publish a new event version/type',
  },
  {
    types: /^(OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL|PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL)$/,
    direction: 'backward',
    describe: '{new} declares property {name} in an open object',
    effect: 'data written with {old} may already carry {name} with any value',
    hint: 'close the object (additionalProperties: false) in every version, or use the evgen or confluent-lenient policy',
  },
  {
    types: /^(OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL|PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL)$/,
    direction: 'forward',
    describe: '{new} no longer declares property {name} of an open object',
    effect:
      'data written with {new} may carry {name} with any value, and consumers still on {old} check it',
    hint: 'keep {name} declared (optional, deprecated), or use the evgen or confluent-lenient policy',
  },
  {
    types:
      /^(PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL|PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL)$/,
    direction: 'forward',
    describe: '{new} adds property {name}',
    effect: 'consumers still on {old} reject it, as {old} closes the object',
    hint: 'deploy consumers first (needs a BACKWARD mode), or use the evgen policy (its readers ignore unknown properties)',
  },
  {
    types:
      /^(PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL|PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL)$/,
    direction: 'backward',
    describe: '{new} removes property {name} from a closed object',
    effect: 'data written with {old} may still carry it',
    hint: 'keep the property declared (optional, deprecated), or allow extras with additionalProperties',
  },
  {
    types: /^PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL$/,
    describe:
      '{reader} declares property {name} with a schema that rejects what {writer} accepts for it as an extra property',
    hint: 'declare {name} with a schema that accepts what {writer} accepted for extra properties (its additionalProperties schema)',
  },
  {
    types: /^(ITEM_|ADDITIONAL_ITEMS_|UNEVALUATED_ITEMS_)/,
    describe: 'the items of {name} in {reader} do not accept every item {writer} allows ({type})',
    hint: 'keep tuple positions and item rules as they were; add a new property for the new shape',
  },
  {
    types: /^(ADDITIONAL_PROPERTIES_|UNEVALUATED_PROPERTIES_)/,
    describe: '{reader} accepts fewer extra properties in {name} than {writer} ({type})',
    hint: 'keep accepting what was accepted before, or publish a new event version/type',
  },
  {
    types: /^(DEPENDENCY_)/,
    describe: 'a property dependency of {name} is stricter in {reader} than in {writer} ({type})',
    hint: 'do not add dependencies between released properties; validate the rule in the producer instead',
  },
  {
    types: /^SCHEMA_ADDED$/,
    describe: '{reader} constrains {name} where {writer} accepts anything',
    hint: 'do not constrain released data; add a new property instead',
  },
  {
    types: /_(ADDED|INCREASED|DECREASED|CHANGED|EXPANDED)$/,
    describe: '{name} is stricter in {reader} than in {writer} ({type})',
    hint: 'do not tighten constraints on released data; enforce the stricter rule in the producer, or add a new event version',
  },
  {
    types: /^RESERVED_PROPERTY_(CONFLICTS_WITH_PROPERTY|REMOVED)$/,
    describe: '{new} declares or un-reserves reserved property {name} ({type})',
    hint: 'keep reserved names reserved; pick a new name for the new property',
  },
  {
    types:
      /^REQUIRED_(PROPERTY_WITH_DEFAULT_ADDED_TO_(OPEN|UNOPEN)_CONTENT_MODEL|ATTRIBUTE_REMOVED)$/,
    describe: 'whether {name} is required differs between {writer} and {reader} ({type})',
    effect: 'data written with {writer} may lack it or carry any value',
    hint: 'close the object (additionalProperties: false) before relying on a default, or keep {name} as it was',
  },
  {
    types:
      /^(PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL|PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL|PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL|PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL|PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL|OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL)$/,
    describe:
      'property {name} is declared in only one of {writer} and {reader}, where extras are still read ({type})',
    hint: 'no action needed under STRICT; under a stricter custom policy keep the property declared (optional, deprecated)',
  },
  {
    types:
      /^(COMBINED_TYPE_EXTENDED|SUM_TYPE_EXTENDED|TYPE_EXTENDED|PRODUCT_TYPE_NARROWED|NOT_TYPE_NARROWED|ENUM_ARRAY_EXTENDED|SCHEMA_REMOVED)$/,
    describe: '{name} accepts more values in {reader} than in {writer} ({type})',
    hint: 'readers of the other version may meet values they do not accept: deploy readers of the wider version first',
  },
  {
    types: /^(.*_REMOVED|MULTIPLE_OF_REDUCED)$/,
    describe: 'a constraint on {name} is looser in {reader} than in {writer} ({type})',
    hint: 'older readers still enforce it: deploy readers before writers that rely on the looser rule',
  },
  {
    types: /.*/,
    describe: '{name}: {type} ({writer} → {reader})',
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

/** How the two compared schemas are called in messages: `v3` and `v1`, or file names. */
export interface VersionLabels {
  readonly new: string;
  readonly old: string;
}

/** What the failed direction does to readers, when the rule says nothing more precise. */
const GENERIC_EFFECT: Readonly<Record<Direction, string>> = {
  backward: 'consumers on {new} cannot read data written with {old}',
  forward: 'consumers still on {old} cannot read data written with {new}',
};

/** The first rule for a difference type seen in `direction` under `policy`. */
export function hintRuleFor(
  type: string,
  direction: Direction,
  policy: CompatibilityPolicy = 'evgen',
): HintRule {
  const audience: HintAudience = policy === 'evgen' ? 'evgen' : 'confluent';
  return HINT_RULES.find(
    (candidate) =>
      candidate.types.test(type) &&
      (candidate.direction === undefined || candidate.direction === direction) &&
      (candidate.audience === undefined || candidate.audience === audience),
  )!;
}

/**
 * `description`: what changed and what it does, ending in the direction, e.g. `v3 removes required
 * property "customerId"; consumers still on v1 require it (forward)`; `hint`: how to fix it.
 */
export function explain(
  type: string,
  path: string,
  direction: Direction,
  labels: VersionLabels = { new: 'the new schema', old: 'the old schema' },
  policy: CompatibilityPolicy = 'evgen',
): { description: string; hint: string } {
  const rule = hintRuleFor(type, direction, policy);
  const [writer, reader] =
    direction === 'backward' ? [labels.old, labels.new] : [labels.new, labels.old];
  const values: Readonly<Record<string, string>> = {
    name: subjectOf(path),
    type,
    new: labels.new,
    old: labels.old,
    writer,
    reader,
  };
  const fill = (text: string) =>
    text.replace(/\{(\w+)\}/g, (all, key: string) => values[key] ?? all);
  const effect = rule.effect ?? GENERIC_EFFECT[direction];
  // Confluent names a difference as the reader sees it: forward, the reader is the older version.
  const naming =
    direction === 'forward'
      ? `forward; named as Confluent does, with ${labels.old} as the reader`
      : direction;
  return {
    description: `${fill(rule.describe)}; ${fill(effect)} (${naming})`,
    hint: fill(rule.hint),
  };
}
