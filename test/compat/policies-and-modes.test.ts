/**
 * Policies (evgen, confluent, confluent-lenient) and modes (BACKWARD/FORWARD/FULL, transitive,
 * NONE) on two- and three-version events.
 */
import { describe, expect, it } from 'vitest';
import {
  checkCatalog,
  checkReadable,
  type CompatibilityMode,
  type CompatibilityPolicy,
  type JsonSchema,
} from 'evgen';
import { catalogOf, eventWith, payload } from './support/hand-catalog.js';

const rulesOf = (
  schemas: JsonSchema[],
  mode: CompatibilityMode,
  policy: CompatibilityPolicy = 'evgen',
) =>
  checkCatalog(catalogOf(eventWith(schemas, { mode, policy }))).violations.map(
    (v) => `${v.direction}:${v.code}`,
  );

const v1 = payload({
  note: { type: 'string' },
  channel: { type: 'string', enum: ['web', 'store'] },
});
const addOptional = payload({
  note: { type: 'string' },
  channel: { type: 'string', enum: ['web', 'store'] },
  coupon: { type: 'string' },
});
const removeOptional = payload({ channel: { type: 'string', enum: ['web', 'store'] } });
const addRequired = payload(
  {
    note: { type: 'string' },
    channel: { type: 'string', enum: ['web', 'store'] },
    priority: { type: 'integer' },
  },
  ['priority'],
);
const addRequiredWithDefault = payload(
  {
    note: { type: 'string' },
    channel: { type: 'string', enum: ['web', 'store'] },
    priority: { type: 'integer', default: 0 },
  },
  ['priority'],
);
const changeType = payload({
  note: { type: 'integer' },
  channel: { type: 'string', enum: ['web', 'store'] },
});
const narrowEnum = payload({
  note: { type: 'string' },
  channel: { type: 'string', enum: ['web'] },
});
const extendEnum = payload({
  note: { type: 'string' },
  channel: { type: 'string', enum: ['web', 'store', 'app'] },
});

describe('evgen policy: writer closed, reader open', () => {
  it.each(['BACKWARD', 'FORWARD', 'FULL', 'FULL_TRANSITIVE'] as const)(
    'adding or removing an optional property is compatible under %s',
    (mode) => {
      expect(rulesOf([v1, addOptional], mode)).toEqual([]);
      expect(rulesOf([v1, removeOptional], mode)).toEqual([]);
    },
  );

  it('adding a required property breaks backward only, with or without a default', () => {
    expect(rulesOf([v1, addRequired], 'BACKWARD')).toEqual([
      'backward:REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
    ]);
    expect(rulesOf([v1, addRequired], 'FORWARD')).toEqual([]);
    expect(rulesOf([v1, addRequired], 'FULL')).toEqual([
      'backward:REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
    ]);
    // Confluent forgives a default (its readers fill it in); evgen's validators check the payload
    // as sent, so data without the property is rejected.
    expect(rulesOf([v1, addRequiredWithDefault], 'FULL')).toEqual([
      'backward:REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL',
    ]);
    expect(rulesOf([v1, addRequiredWithDefault], 'FULL', 'confluent')).not.toContain(
      'backward:REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL',
    );
  });

  it('removing a required property breaks forward only', () => {
    const withRequiredNote = payload({ note: { type: 'string' } }, ['note']);
    const without = payload({});
    expect(rulesOf([withRequiredNote, without], 'BACKWARD')).toEqual([]);
    expect(rulesOf([withRequiredNote, without], 'FORWARD')).toEqual([
      'forward:REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
    ]);
  });

  it('changing a type breaks both directions', () => {
    expect(rulesOf([v1, changeType], 'FULL')).toEqual([
      'backward:TYPE_CHANGED',
      'forward:TYPE_CHANGED',
    ]);
  });

  it('narrowing an enum breaks backward, extending it breaks forward', () => {
    expect(rulesOf([v1, narrowEnum], 'BACKWARD')).toEqual(['backward:ENUM_ARRAY_NARROWED']);
    expect(rulesOf([v1, narrowEnum], 'FORWARD')).toEqual([]);
    expect(rulesOf([v1, extendEnum], 'FORWARD')).toEqual(['forward:ENUM_ARRAY_NARROWED']);
    expect(rulesOf([v1, extendEnum], 'BACKWARD')).toEqual([]);
  });

  it('also holds for schemas that do not close their objects themselves', () => {
    const open1 = payload({ note: { type: 'string' } }, [], false);
    const open2 = payload({ note: { type: 'string' }, coupon: { type: 'string' } }, [], false);
    expect(rulesOf([open1, open2], 'FULL')).toEqual([]);
  });

  it('leaves negated schemas as written (closing inside `not` would invert the check)', () => {
    const negated = (extra: Record<string, JsonSchema>): JsonSchema => ({
      type: 'object',
      not: { type: 'object', properties: { a: { type: 'string' }, ...extra }, required: ['a'] },
    });
    expect(checkReadable(negated({}), negated({}), 'evgen')).toMatchObject({ compatible: true });
  });

  it('checks the writer closed and the reader open', () => {
    const open = payload({}, [], false);
    const withNote = payload({ note: { type: 'string' } }, [], false);
    // Plain Confluent would say: an optional property added to an open content model.
    expect(checkReadable(open, withNote, 'confluent').compatible).toBe(false);
    expect(checkReadable(open, withNote, 'evgen').compatible).toBe(true);
  });
});

describe('confluent policies', () => {
  it('STRICT rejects an optional property added to an open model; LENIENT accepts it', () => {
    const open1 = payload({}, [], false);
    const open2 = payload({ coupon: { type: 'string' } }, [], false);
    expect(rulesOf([open1, open2], 'BACKWARD', 'confluent')).toEqual([
      'backward:OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL',
    ]);
    expect(rulesOf([open1, open2], 'BACKWARD', 'confluent-lenient')).toEqual([]);
  });

  it('a property added to a closed model is forward-incompatible under STRICT (FULL fails)', () => {
    expect(rulesOf([v1, addOptional], 'BACKWARD', 'confluent')).toEqual([]);
    expect(rulesOf([v1, addOptional], 'FULL', 'confluent')).toEqual([
      'forward:PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL',
    ]);
    expect(rulesOf([v1, addOptional], 'FULL', 'confluent-lenient')).toEqual([]);
  });

  it("a --policy for the run overrides the event's policy", () => {
    const catalog = catalogOf(eventWith([v1, addOptional], { mode: 'FULL', policy: 'evgen' }));
    expect(checkCatalog(catalog).ok).toBe(true);
    expect(
      checkCatalog(catalog, { policy: 'confluent' }).violations.map((v) => [v.code, v.policy]),
    ).toEqual([['PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL', 'confluent']]);
  });
});

describe('modes', () => {
  // v2 narrows the enum of v1; v3 only adds an optional property to v2.
  const first = payload({ channel: { type: 'string', enum: ['web', 'store', 'app'] } });
  const second = payload({ channel: { type: 'string', enum: ['web', 'store'] } });
  const third = payload({
    channel: { type: 'string', enum: ['web', 'store'] },
    coupon: { type: 'string' },
  });

  it('non-transitive compares with the previous version only; transitive with every earlier one', () => {
    const byPair = (mode: CompatibilityMode) =>
      checkCatalog(catalogOf(eventWith([first, second, third], { mode }))).violations.map(
        (v) => `v${v.version}/v${v.against}:${v.code}`,
      );
    expect(byPair('BACKWARD')).toEqual(['v2/v1:ENUM_ARRAY_NARROWED']);
    expect(byPair('BACKWARD_TRANSITIVE')).toEqual([
      'v2/v1:ENUM_ARRAY_NARROWED',
      'v3/v1:ENUM_ARRAY_NARROWED',
    ]);
    expect(byPair('FORWARD_TRANSITIVE')).toEqual([]);
  });

  it('NONE checks nothing', () => {
    const report = checkCatalog(catalogOf(eventWith([v1, changeType], { mode: 'NONE' })));
    expect(report).toMatchObject({ ok: true, pairsChecked: 0 });
  });

  it('says which side must deploy first', () => {
    const order = (schemas: JsonSchema[]) =>
      checkCatalog(catalogOf(eventWith(schemas, { mode: 'FULL' }))).violations.map(
        (v) => v.deployFirst,
      );
    // Backward-compatible only (old readers reject the new value): consumers first.
    expect(order([v1, extendEnum])).toEqual(['consumers']);
    // Forward-compatible only (new readers need a field old data lacks): producers first.
    expect(order([v1, addRequired])).toEqual(['producers']);
    expect(order([v1, changeType])).toEqual(['none', 'none']);
  });

  it('reports every violation, with file, pointer, message and hint', () => {
    const broken = payload(
      {
        note: { type: 'integer' },
        channel: { type: 'string', enum: ['web'] },
        priority: { type: 'integer' },
      },
      ['priority'],
    );
    const report = checkCatalog(catalogOf(eventWith([v1, broken], { mode: 'BACKWARD' })));
    expect(report.violations.map((v) => [v.pointer, v.code])).toEqual([
      ['/properties/channel/enum', 'ENUM_ARRAY_NARROWED'],
      ['/properties/note', 'TYPE_CHANGED'],
      ['/properties/priority', 'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL'],
    ]);
    const priority = report.violations[2]!;
    expect(priority.file).toBe('/catalog/test/Thing/v2.schema.json');
    expect(priority.message).toBe(
      'v2 adds required property "priority"; data written with v1 does not have it (backward)',
    );
    expect(priority.hint).toBe(
      'make "priority" optional (a default does not help: evgen readers fill nothing in), or add a new event type',
    );
  });
});
