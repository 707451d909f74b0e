/**
 * Every hint names a change `evgen check` then accepts. For each hint rule a violation can show
 * (a difference type some policy calls incompatible, in a direction, for that policy's readers),
 * an example: two versions whose check reports the rule's hint, and the fix the hint names (a new
 * version, a mode or a policy); the check of the fixed catalog must pass under the event's mode.
 */
import { describe, expect, it } from 'vitest';
import {
  ALL_DIFFERENCE_TYPES,
  checkCatalog,
  type CompatibilityMode,
  type CompatibilityPolicy,
  type JsonSchema,
} from 'evgen';
import { HINT_RULES, hintRuleFor, type HintRule } from '../../src/compat/rules/hints.js';
import { POLICIES } from '../../src/compat/policy.js';
import { catalogOf, eventWith, payload } from './support/hand-catalog.js';

interface Example {
  readonly old: JsonSchema;
  readonly new: JsonSchema;
  readonly mode: CompatibilityMode;
  readonly policy: CompatibilityPolicy;
  /** What following the hint gives: another new version, and/or another mode or policy. */
  readonly fixed: {
    readonly new?: JsonSchema;
    readonly mode?: CompatibilityMode;
    readonly policy?: CompatibilityPolicy;
  };
}

const int: JsonSchema = { type: 'integer' };
const withDefault: JsonSchema = { type: 'integer', default: 0 };
const open = (properties: Record<string, JsonSchema>) => payload(properties, [], false);
/** The same, as objects to spread a keyword into. */
const openObject = (properties: Record<string, JsonSchema>) =>
  open(properties) as Record<string, unknown>;
const payloadObject = (properties: Record<string, JsonSchema>) =>
  payload(properties) as Record<string, unknown>;

/** Keyed by the rule's position in HINT_RULES, found by a type, direction and policy it serves. */
const EXAMPLES: readonly [string, 'backward' | 'forward', CompatibilityPolicy, Example][] = [
  [
    'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
    'backward',
    'evgen',
    {
      old: payload({}),
      new: payload({ p: int }, ['p']),
      mode: 'FULL_TRANSITIVE',
      policy: 'evgen',
      fixed: { new: payload({ p: int }) },
    },
  ],
  [
    'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
    'backward',
    'confluent',
    {
      old: payload({}),
      new: payload({ p: int }, ['p']),
      mode: 'BACKWARD',
      policy: 'confluent',
      fixed: { new: payload({ p: withDefault }, ['p']) },
    },
  ],
  [
    'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
    'forward',
    'evgen',
    {
      old: payload({ p: int }, ['p']),
      new: payload({}),
      mode: 'FULL_TRANSITIVE',
      policy: 'evgen',
      fixed: { new: payload({ p: int }, ['p']) },
    },
  ],
  [
    'REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL',
    'backward',
    'evgen',
    {
      old: payload({}),
      new: payload({ p: withDefault }, ['p']),
      mode: 'FULL_TRANSITIVE',
      policy: 'evgen',
      fixed: { new: payload({ p: withDefault }) },
    },
  ],
  [
    'REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL',
    'forward',
    'evgen',
    {
      old: payload({ p: withDefault }, ['p']),
      new: payload({}),
      mode: 'FULL_TRANSITIVE',
      policy: 'evgen',
      fixed: { new: payload({ p: withDefault }, ['p']) },
    },
  ],
  [
    'REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED',
    'backward',
    'evgen',
    {
      old: payload({ p: withDefault }),
      new: payload({ p: withDefault }, ['p']),
      mode: 'FULL_TRANSITIVE',
      policy: 'evgen',
      fixed: { new: payload({ p: withDefault }) },
    },
  ],
  [
    'REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED',
    'forward',
    'evgen',
    {
      old: payload({ p: withDefault }, ['p']),
      new: payload({ p: withDefault }),
      mode: 'FULL_TRANSITIVE',
      policy: 'evgen',
      fixed: { new: payload({ p: withDefault }, ['p']) },
    },
  ],
  [
    'REQUIRED_ATTRIBUTE_ADDED',
    'backward',
    'evgen',
    {
      old: payload({ p: int }),
      new: payload({ p: int }, ['p']),
      mode: 'FULL_TRANSITIVE',
      policy: 'evgen',
      fixed: { new: payload({ p: int }) },
    },
  ],
  [
    'REQUIRED_ATTRIBUTE_ADDED',
    'backward',
    'confluent',
    {
      old: payload({ p: int }),
      new: payload({ p: int }, ['p']),
      mode: 'BACKWARD',
      policy: 'confluent',
      fixed: { new: payload({ p: withDefault }, ['p']) },
    },
  ],
  [
    'REQUIRED_ATTRIBUTE_ADDED',
    'forward',
    'evgen',
    {
      old: payload({ p: int }, ['p']),
      new: payload({ p: int }),
      mode: 'FULL_TRANSITIVE',
      policy: 'evgen',
      fixed: { new: payload({ p: int }, ['p']) },
    },
  ],
  [
    'ENUM_ARRAY_NARROWED',
    'backward',
    'evgen',
    {
      old: payload({ c: { enum: ['a', 'b'] } }),
      new: payload({ c: { enum: ['a'] } }),
      mode: 'BACKWARD',
      policy: 'evgen',
      fixed: { new: payload({ c: { enum: ['a', 'b'], description: 'b is deprecated' } }) },
    },
  ],
  [
    'ENUM_ARRAY_NARROWED',
    'forward',
    'evgen',
    {
      old: payload({ c: { enum: ['a'] } }),
      new: payload({ c: { enum: ['a', 'b'] } }),
      mode: 'FULL',
      policy: 'evgen',
      fixed: { mode: 'BACKWARD' },
    },
  ],
  [
    'TYPE_CHANGED',
    'backward',
    'evgen',
    {
      old: payload({ c: { type: 'string' } }),
      new: payload({ c: int }),
      mode: 'FULL_TRANSITIVE',
      policy: 'evgen',
      fixed: { new: payload({ c: { type: 'string' }, cCount: int }) },
    },
  ],
  [
    'OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL',
    'backward',
    'confluent',
    {
      old: open({}),
      new: open({ p: int }),
      mode: 'BACKWARD',
      policy: 'confluent',
      fixed: { policy: 'evgen' },
    },
  ],
  [
    'OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL',
    'forward',
    'confluent',
    {
      old: open({ p: int }),
      new: open({}),
      mode: 'FORWARD',
      policy: 'confluent',
      fixed: { new: open({ p: { ...int, deprecated: true } }) },
    },
  ],
  [
    'PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL',
    'forward',
    'confluent',
    {
      old: payload({}),
      new: payload({ p: int }),
      mode: 'FULL',
      policy: 'confluent',
      fixed: { policy: 'evgen' },
    },
  ],
  [
    'PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL',
    'backward',
    'confluent',
    {
      old: payload({ p: int }),
      new: payload({}),
      mode: 'BACKWARD',
      policy: 'confluent',
      fixed: { new: payload({ p: { ...int, deprecated: true } }) },
    },
  ],
  [
    'PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
    'backward',
    'confluent',
    {
      old: { ...openObject({}), additionalProperties: { type: 'string' } },
      new: { ...openObject({ p: int }), additionalProperties: { type: 'string' } },
      mode: 'BACKWARD',
      policy: 'confluent',
      fixed: {
        new: {
          ...openObject({ p: { type: 'string' } }),
          additionalProperties: { type: 'string' },
        },
      },
    },
  ],
  [
    'ITEM_ADDED_TO_OPEN_CONTENT_MODEL',
    'backward',
    'confluent',
    {
      old: payload({ c: { type: 'array', items: [{ type: 'string' }] } }),
      new: payload({ c: { type: 'array', items: [{ type: 'string' }, int] } }),
      mode: 'BACKWARD',
      policy: 'confluent',
      fixed: {
        new: payload({
          c: { type: 'array', items: [{ type: 'string' }] },
          pair: { type: 'array', items: [{ type: 'string' }, int] },
        }),
      },
    },
  ],
  [
    'ADDITIONAL_PROPERTIES_REMOVED',
    'backward',
    'confluent',
    {
      old: payload({ c: { type: 'object' } }),
      new: payload({ c: { type: 'object', additionalProperties: false } }),
      mode: 'BACKWARD',
      policy: 'confluent',
      fixed: { new: payload({ c: { type: 'object' } }) },
    },
  ],
  [
    'DEPENDENCY_ARRAY_ADDED',
    'backward',
    'evgen',
    {
      old: payload({ a: int, b: int }),
      new: { ...payloadObject({ a: int, b: int }), dependencies: { a: ['b'] } },
      mode: 'BACKWARD',
      policy: 'evgen',
      fixed: { new: payload({ a: int, b: int }) },
    },
  ],
  [
    'SCHEMA_ADDED',
    'backward',
    'confluent',
    {
      old: payload({ c: { type: 'array' } }),
      new: payload({ c: { type: 'array', items: {} } }),
      mode: 'BACKWARD',
      policy: 'confluent',
      fixed: {
        new: payload({
          c: { type: 'array' },
          cItems: { type: 'array', items: {} },
        }),
      },
    },
  ],
  [
    'MAXIMUM_DECREASED',
    'backward',
    'evgen',
    {
      old: payload({ c: { type: 'integer', maximum: 10 } }),
      new: payload({ c: { type: 'integer', maximum: 5 } }),
      mode: 'BACKWARD',
      policy: 'evgen',
      fixed: { new: payload({ c: { type: 'integer', maximum: 10 } }) },
    },
  ],
];

const audience = (policy: CompatibilityPolicy) => (policy === 'evgen' ? 'evgen' : 'confluent');

/** Hint rules a violation can show: some policy calls one of its types incompatible. */
function reachableRules(): Set<HintRule> {
  const reachable = new Set<HintRule>();
  for (const policy of ['evgen', 'confluent', 'confluent-lenient'] as const)
    for (const type of ALL_DIFFERENCE_TYPES) {
      if (POLICIES[policy].compatibleTypes.has(type)) continue;
      for (const direction of ['backward', 'forward'] as const)
        reachable.add(hintRuleFor(type, direction, policy));
    }
  return reachable;
}

function violationsOf(example: Example, fix?: Example['fixed']) {
  const schemas = [example.old, fix?.new ?? example.new];
  return checkCatalog(
    catalogOf(
      eventWith(schemas, {
        mode: fix?.mode ?? example.mode,
        policy: fix?.policy ?? example.policy,
      }),
    ),
  ).violations;
}

describe('hints lead to a change the check accepts', () => {
  it('every hint a violation can show has an example here', () => {
    const covered = new Set(
      EXAMPLES.map(([type, direction, policy]) => hintRuleFor(type, direction, policy)),
    );
    const missing = [...reachableRules()]
      .filter((rule) => !covered.has(rule))
      // Registry metadata (reserved properties) never comes from comparing two schemas.
      .filter((rule) => !rule.types.test('RESERVED_PROPERTY_REMOVED'))
      .map((rule) => `${String(rule.types)} ${rule.direction ?? ''} ${rule.audience ?? ''}`);
    expect(missing).toEqual([]);
  });

  it.each(EXAMPLES.map(([type, direction, policy, example]) => [type, direction, policy, example]))(
    '%s (%s, %s readers): the hint is shown, and following it passes',
    (type, direction, policy, example) => {
      const rule = hintRuleFor(type, direction, policy);
      expect(rule.audience === undefined || rule.audience === audience(policy)).toBe(true);
      const violations = violationsOf(example);
      const shown = violations.filter(
        (violation) => violation.code === type && violation.direction === direction,
      );
      expect(shown.length, JSON.stringify(violations.map((v) => [v.code, v.direction]))).toBe(1);
      // The rule's hint, filled in for this violation.
      const pattern = new RegExp(
        `^${rule.hint.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '.+')}$`,
      );
      expect(shown[0]!.hint).toMatch(pattern);
      expect(violationsOf(example, example.fixed)).toEqual([]);
    },
  );
});

it('the catch-all hint is unused (every type has its own)', () => {
  expect(reachableRules().has(HINT_RULES[HINT_RULES.length - 1]!)).toBe(false);
});
