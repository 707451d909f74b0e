/**
 * The five places where evgen once disagreed with Confluent's own checker on held-out pairs
 * (BACKWARD, original → update). Each pair pins Confluent's verdict and change set in the
 * `confluent` reading (`diffSchemas`, policies `confluent`/`confluent-lenient`), and, where the
 * `evgen` policy judges by meaning instead, what it says.
 */
import { describe, expect, it } from 'vitest';
import {
  ALL_DIFFERENCE_TYPES,
  checkReadable,
  diffSchemas,
  type CompatibilityPolicy,
  type JsonSchema,
} from 'evgen';
import { HINT_RULES } from '../../src/compat/rules/hints.js';

const confluent = (original: JsonSchema, update: JsonSchema) => {
  const result = diffSchemas(original, update);
  return {
    compatible: result.compatible,
    changes: result.changes.map((c) => `${c.type} ${c.path}`),
  };
};
const verdict = (original: JsonSchema, update: JsonSchema, policy: CompatibilityPolicy) =>
  checkReadable(original, update, policy).compatible;

describe('1. a `type` beside a combining keyword is an implicit allOf of the combiner and the typed part', () => {
  const typed = (keyword: string, branches: JsonSchema[]) =>
    ({ type: 'number', [keyword]: branches }) as JsonSchema;
  const branches: JsonSchema[] = [{ maximum: 100 }, { multipleOf: 6 }];

  it.each(['allOf', 'oneOf'])(
    '%s → anyOf beside type: compatible, COMBINED_TYPE_EXTENDED',
    (from) => {
      expect(confluent(typed(from, branches), typed('anyOf', branches))).toEqual({
        compatible: true,
        changes: ['COMBINED_TYPE_EXTENDED #/allOf/0'],
      });
    },
  );

  it('one-branch allOf → anyOf beside type: compatible', () => {
    expect(
      confluent(typed('allOf', [{ maximum: 100 }]), typed('anyOf', [{ maximum: 100 }])),
    ).toEqual({ compatible: true, changes: ['COMBINED_TYPE_EXTENDED #/allOf/0'] });
  });

  it('paths name the implicit allOf: a changed branch is at #/allOf/0/allOf/N', () => {
    expect(
      confluent(typed('allOf', [{ maximum: 100 }]), typed('allOf', [{ maximum: 150 }])),
    ).toEqual({ compatible: true, changes: ['MAXIMUM_INCREASED #/allOf/0/allOf/0/maximum'] });
    // Narrowed: no branch reads what the old one allowed, so the parts no longer pair up.
    expect(
      confluent(typed('allOf', [{ maximum: 100 }]), typed('allOf', [{ maximum: 50 }])).changes,
    ).toContain('COMBINED_TYPE_SUBSCHEMAS_CHANGED #/');
  });

  it('the part order follows the loader: enum, combiner, …, type', () => {
    const original = { type: 'number', enum: [6, 12], allOf: [{ maximum: 100 }] } as JsonSchema;
    const update = { type: 'number', enum: [6, 12], anyOf: [{ maximum: 100 }] } as JsonSchema;
    expect(confluent(original, update)).toEqual({
      compatible: true,
      changes: ['COMBINED_TYPE_EXTENDED #/allOf/1'],
    });
  });

  it('without the sibling type nothing changes: the combiner itself loosened', () => {
    expect(confluent({ allOf: branches }, { anyOf: branches })).toEqual({
      compatible: true,
      changes: ['COMBINED_TYPE_EXTENDED #/'],
    });
  });

  it('anyOf → allOf beside type stays incompatible', () => {
    expect(confluent(typed('anyOf', branches), typed('allOf', branches)).compatible).toBe(false);
  });
});

describe('2. patternProperties', () => {
  const original = {
    type: 'object',
    patternProperties: { '^a': { type: 'string' } },
  } as JsonSchema;
  const update = { type: 'object', patternProperties: { '^a': { type: 'number' } } } as JsonSchema;

  it('Confluent does not compare them', () => {
    expect(confluent(original, update)).toEqual({ compatible: true, changes: [] });
    expect(verdict(original, update, 'confluent')).toBe(true);
    expect(verdict(original, update, 'confluent-lenient')).toBe(true);
  });

  it('policy evgen does: a reader would reject the "a…" values written before', () => {
    const result = checkReadable(original, update, 'evgen');
    expect(result.compatible).toBe(false);
    expect(result.incompatibleChanges.map((c) => `${c.type} ${c.path}`)).toEqual([
      'TYPE_CHANGED #/patternProperties/^a',
    ]);
  });
});

describe('3. draft-04 boolean exclusiveMinimum / exclusiveMaximum', () => {
  const draft04 = (extra: Record<string, unknown>) =>
    ({
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'number',
      minimum: 10,
      maximum: 20,
      ...extra,
    }) as JsonSchema;
  const draft07 = { type: 'number', minimum: 10, maximum: 20 } as JsonSchema;

  it.each([
    ['exclusiveMinimum removed', draft04({ exclusiveMinimum: true }), draft04({})],
    ['exclusiveMinimum added', draft04({}), draft04({ exclusiveMinimum: true })],
    ['exclusiveMaximum removed', draft04({ exclusiveMaximum: true }), draft04({})],
    ['exclusiveMaximum added', draft04({}), draft04({ exclusiveMaximum: true })],
    ['draft-04 exclusive → draft-07', draft04({ exclusiveMinimum: true }), draft07],
    ['draft-07 → draft-04 exclusive', draft07, draft04({ exclusiveMaximum: true })],
  ])('Confluent ignores the boolean form: %s', (_name, original, update) => {
    expect(confluent(original, update)).toEqual({ compatible: true, changes: [] });
  });

  it('policy evgen: dropping exclusivity widens (compatible backward), adding it narrows', () => {
    for (const keyword of ['exclusiveMinimum', 'exclusiveMaximum']) {
      const exclusive = draft04({ [keyword]: true });
      expect(verdict(exclusive, draft04({}), 'evgen')).toBe(true);
      expect(verdict(draft04({}), exclusive, 'evgen')).toBe(false);
      expect(verdict(exclusive, draft07, 'evgen')).toBe(true);
      expect(verdict(draft07, exclusive, 'evgen')).toBe(false);
    }
  });

  it('policy evgen compares a bound however it is written', () => {
    const exclusive10 = { type: 'number', exclusiveMinimum: 10 } as JsonSchema;
    const draft04Exclusive10 = draft04({ exclusiveMinimum: true, maximum: undefined });
    expect(checkReadable(draft04Exclusive10, exclusive10, 'evgen').changes).toEqual([]);
    expect(verdict({ type: 'number', minimum: 11 }, exclusive10, 'evgen')).toBe(true);
    expect(verdict(exclusive10, { type: 'number', minimum: 11 }, 'evgen')).toBe(false);
    expect(verdict(exclusive10, { type: 'number', minimum: 9 }, 'evgen')).toBe(true);
  });
});

describe('4. keywords are read by the schema’s own dialect', () => {
  it('draft-07: prefixItems is unknown and items:false allows only the empty array', () => {
    expect(
      confluent(
        { type: 'array', items: [{ type: 'integer' }], additionalItems: false },
        {
          type: 'array',
          prefixItems: [{ type: 'integer' }],
          items: false,
        },
      ),
    ).toEqual({
      compatible: false,
      changes: [
        'ADDITIONAL_ITEMS_ADDED #/additionalItems',
        'SCHEMA_ADDED #/items',
        'ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL #/items/0',
      ],
    });
  });

  it('draft-07: a prefixItems beside no items constrains nothing', () => {
    expect(
      confluent(
        { type: 'array', items: { type: 'integer' } },
        {
          type: 'array',
          prefixItems: [{ type: 'string' }],
        },
      ),
    ).toEqual({ compatible: true, changes: ['SCHEMA_REMOVED #/items'] });
  });

  it('2020-12: the same pair is a tuple (compatible)', () => {
    const $schema = 'https://json-schema.org/draft/2020-12/schema';
    expect(
      confluent(
        { $schema, type: 'array', prefixItems: [{ type: 'integer' }], items: false },
        { $schema, type: 'array', prefixItems: [{ type: 'integer' }], items: false },
      ),
    ).toEqual({ compatible: true, changes: [] });
  });
});

describe('5. Kafka Connect decimal as bytes', () => {
  const bytes = (type: string) => ({ type, 'connect.type': 'bytes' }) as JsonSchema;

  it('string ↔ number both annotated connect.type bytes: no difference in Confluent', () => {
    expect(confluent(bytes('string'), bytes('number'))).toEqual({ compatible: true, changes: [] });
    expect(confluent(bytes('number'), bytes('string'))).toEqual({ compatible: true, changes: [] });
  });

  it('without the annotation on both sides it is a type change', () => {
    expect(confluent({ type: 'string' }, bytes('number')).changes).toEqual(['TYPE_CHANGED #/']);
    expect(
      confluent(bytes('string'), { type: 'boolean', 'connect.type': 'bytes' }).compatible,
    ).toBe(false);
  });

  it('policy evgen still calls it a type change: its readers validate the JSON type', () => {
    expect(verdict(bytes('string'), bytes('number'), 'evgen')).toBe(false);
  });
});

describe('every difference type has its own hint', () => {
  it('none of the 132 types falls back to the generic hint, in either direction', () => {
    const generic = HINT_RULES[HINT_RULES.length - 1]!;
    const fallbacks = (['backward', 'forward'] as const).flatMap((direction) =>
      ALL_DIFFERENCE_TYPES.filter(
        (type) =>
          HINT_RULES.find(
            (rule) =>
              rule.types.test(type) &&
              (rule.direction === undefined || rule.direction === direction),
          ) === generic,
      ).map((type) => `${direction}:${type}`),
    );
    expect(ALL_DIFFERENCE_TYPES).toHaveLength(132);
    expect(fallbacks).toEqual([]);
  });
});
