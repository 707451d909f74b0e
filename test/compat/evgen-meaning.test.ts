/**
 * Policy `evgen` judges by meaning the keywords Confluent's checker does not compare (or compares
 * by spelling): `format`, `contains`, `propertyNames`, `if`/`then`/`else`, dependencies,
 * `const` ↔ one-value `enum`, no-op floors, `required` names without a declaration, and type-less
 * schemas. What it cannot judge it refuses (UnjudgedChangeError; a catalog problem in `check`).
 * Policy `confluent` keeps Confluent's verdicts on the same pairs.
 */
import { describe, expect, it } from 'vitest';
import {
  checkCatalog,
  checkReadable,
  ComparisonProblem,
  UnjudgedChangeError,
  type JsonSchema,
} from 'evgen';
import { catalogOf, eventWith } from './support/hand-catalog.js';

const D2020 = 'https://json-schema.org/draft/2020-12/schema';

/** A payload with one property `x` (draft-07 unless `dialect` says otherwise). */
const withX = (x: JsonSchema, extra: Record<string, unknown> = {}): JsonSchema => ({
  type: 'object',
  properties: { x },
  ...extra,
});

/** evgen's BACKWARD verdict (writer: original, reader: update), or the refused keyword. */
function verdict(original: JsonSchema, update: JsonSchema): string {
  try {
    const result = checkReadable(original, update, 'evgen');
    return result.compatible
      ? 'compatible'
      : `incompatible: ${result.incompatibleChanges.map((c) => `${c.type} ${c.path}`).join(', ')}`;
  } catch (error) {
    if (error instanceof UnjudgedChangeError) return `refused: ${error.keyword} at ${error.path}`;
    throw error;
  }
}

const confluent = (original: JsonSchema, update: JsonSchema) =>
  checkReadable(original, update, 'confluent').compatible;

describe('format', () => {
  const plain = withX({ type: 'string' });
  const email = withX({ type: 'string', format: 'email' });
  it('adding or changing a format is refused; removing or keeping it is compatible', () => {
    expect(verdict(plain, email)).toBe('refused: format at #/properties/x/format');
    expect(verdict(email, withX({ type: 'string', format: 'uuid' }))).toMatch(/^refused: format/);
    expect(verdict(email, plain)).toBe('compatible');
    expect(verdict(email, email)).toBe('compatible');
    expect(confluent(plain, email)).toBe(true);
  });
});

describe('contains', () => {
  const array = (extra: Record<string, unknown>) =>
    withX({ type: 'array', items: { type: 'string' }, ...extra });
  it('a reader contains that reads the writer’s is compatible; adding one rejects [] (or is refused when the writer never allows [])', () => {
    expect(
      verdict(array({ contains: { const: 'a' } }), array({ contains: { enum: ['a', 'b'] } })),
    ).toBe('compatible');
    expect(verdict(array({}), array({ contains: { const: 'a' } }))).toBe(
      'incompatible: MIN_CONTAINS_ADDED #/properties/x/contains',
    );
    expect(verdict(array({ minItems: 1 }), array({ minItems: 1, contains: { const: 'a' } }))).toBe(
      'refused: contains at #/properties/x/contains',
    );
    expect(
      verdict(array({ contains: { enum: ['a', 'b'] } }), array({ contains: { const: 'a' } })),
    ).toMatch(/^refused: contains/);
    expect(verdict(array({ contains: { const: 'a' } }), array({}))).toBe('compatible');
  });
  it('minContains: 1 beside contains is the default, not a new limit', () => {
    expect(
      verdict(
        { $schema: D2020, ...(array({ contains: { const: 'a' } }) as object) },
        { $schema: D2020, ...(array({ contains: { const: 'a' }, minContains: 1 }) as object) },
      ),
    ).toBe('compatible');
  });
});

describe('propertyNames', () => {
  const map = (extra: Record<string, unknown>) =>
    withX({ type: 'object', additionalProperties: { type: 'string' }, ...extra });
  it('a wider reader propertyNames is compatible; a new or narrower one is refused', () => {
    expect(verdict(map({ propertyNames: { maxLength: 3 } }), map({}))).toBe('compatible');
    expect(
      verdict(map({ propertyNames: { maxLength: 3 } }), map({ propertyNames: { maxLength: 5 } })),
    ).toBe('compatible');
    expect(verdict(map({}), map({ propertyNames: { maxLength: 3 } }))).toBe(
      'refused: propertyNames at #/properties/x/propertyNames',
    );
  });
});

describe('if/then/else', () => {
  const conditional = (ifSchema: JsonSchema, then: JsonSchema): JsonSchema => ({
    type: 'object',
    properties: { kind: { type: 'string' }, a: { type: 'string' }, b: { type: 'string' } },
    if: ifSchema,
    then,
  });
  const isX = { properties: { kind: { const: 'x' } }, required: ['kind'] };
  it('with the same if, then/else compare as subschemas', () => {
    expect(
      verdict(conditional(isX, { required: ['a', 'b'] }), conditional(isX, { required: ['a'] })),
    ).toBe('compatible');
    expect(
      verdict(conditional(isX, { required: ['a'] }), conditional(isX, { required: ['a', 'b'] })),
    ).toMatch(/^incompatible: REQUIRED_ATTRIBUTE_ADDED #\/then\/required\/b/);
  });
  it('a changed or added if is refused; dropping the condition is compatible', () => {
    const isY = { properties: { kind: { const: 'y' } }, required: ['kind'] };
    expect(
      verdict(conditional(isX, { required: ['a'] }), conditional(isY, { required: ['a'] })),
    ).toBe('refused: if at #/if');
    const {
      if: _if,
      then: _then,
      ...unconditional
    } = conditional(isX, {}) as Record<string, unknown>;
    expect(verdict(unconditional, conditional(isX, { required: ['a'] }))).toBe(
      'refused: if at #/if',
    );
    expect(verdict(conditional(isX, { required: ['a'] }), unconditional)).toBe('compatible');
  });
});

describe('dependencies', () => {
  const object = (extra: Record<string, unknown>, dialect?: string) => ({
    ...(dialect === undefined ? {} : { $schema: dialect }),
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'string' } },
    ...extra,
  });
  it('dependentRequired / dependentSchemas (2020-12) and dependencies (draft-07): adding narrows, removing widens', () => {
    expect(verdict(object({}, D2020), object({ dependentRequired: { a: ['b'] } }, D2020))).toMatch(
      /^incompatible: DEPENDENCY_ARRAY_ADDED/,
    );
    expect(verdict(object({ dependentRequired: { a: ['b'] } }, D2020), object({}, D2020))).toBe(
      'compatible',
    );
    expect(
      verdict(object({}, D2020), object({ dependentSchemas: { a: { required: ['b'] } } }, D2020)),
    ).toMatch(/^incompatible: DEPENDENCY_SCHEMA_ADDED/);
    expect(verdict(object({}), object({ dependencies: { a: ['b'] } }))).toMatch(
      /^incompatible: DEPENDENCY_ARRAY_ADDED/,
    );
    expect(verdict(object({ dependencies: { a: { required: ['b'] } } }), object({}))).toBe(
      'compatible',
    );
  });
});

describe('const and a one-value enum', () => {
  it('are the same set of values', () => {
    expect(verdict(withX({ const: 'a' }), withX({ enum: ['a'] }))).toBe('compatible');
    expect(verdict(withX({ enum: ['a'] }), withX({ const: 'a' }))).toBe('compatible');
    expect(verdict(withX({ const: 'a' }), withX({ enum: ['a', 'b'] }))).toBe('compatible');
    expect(verdict(withX({ enum: ['a', 'b'] }), withX({ const: 'a' }))).toMatch(
      /^incompatible: ENUM_ARRAY_NARROWED #\/properties\/x\/const/,
    );
    // Confluent compares them as different kinds of schema.
    expect(confluent(withX({ const: 'a' }), withX({ enum: ['a'] }))).toBe(false);
  });
});

describe('no-op constraints', () => {
  it('minLength/minItems/minProperties: 0 add no limit', () => {
    expect(verdict(withX({ type: 'string' }), withX({ type: 'string', minLength: 0 }))).toBe(
      'compatible',
    );
    expect(verdict(withX({ type: 'array' }), withX({ type: 'array', minItems: 0 }))).toBe(
      'compatible',
    );
    expect(verdict(withX({ type: 'object' }), withX({ type: 'object', minProperties: 0 }))).toBe(
      'compatible',
    );
    expect(verdict(withX({ type: 'string' }), withX({ type: 'string', minLength: 1 }))).toMatch(
      /^incompatible: MIN_LENGTH_ADDED/,
    );
    expect(confluent(withX({ type: 'string' }), withX({ type: 'string', minLength: 0 }))).toBe(
      false,
    );
  });
});

describe('what Confluent does not look at', () => {
  it('a required name the reader does not declare is still required', () => {
    expect(verdict(withX({ type: 'string' }), withX({ type: 'string' }, { required: ['y'] }))).toBe(
      'incompatible: REQUIRED_ATTRIBUTE_ADDED #/required/y',
    );
    expect(
      confluent(withX({ type: 'string' }), withX({ type: 'string' }, { required: ['y'] })),
    ).toBe(true);
  });
  it('a schema without type accepts other types: a reader that adds a type narrows it', () => {
    expect(verdict(withX({ minLength: 2 }), withX({ type: 'string', minLength: 2 }))).toMatch(
      /^incompatible: TYPE_CHANGED #\/properties\/x/,
    );
    expect(verdict(withX({ type: 'string', minLength: 2 }), withX({ minLength: 2 }))).toBe(
      'compatible',
    );
  });
});

describe('found by the soundness test', () => {
  const branches = [
    { type: 'object', properties: { a: { type: 'string' } } },
    { type: 'string', minLength: 2 },
  ];
  it('keywords beside a union still bind the reader', () => {
    expect(verdict(withX({ anyOf: branches }), withX({ anyOf: branches, required: ['c'] }))).toBe(
      'incompatible: REQUIRED_ATTRIBUTE_ADDED #/properties/x/required/c',
    );
    expect(
      verdict(withX({ oneOf: branches }), withX({ oneOf: branches, format: 'date' })),
      // Refused would be more precise; a trial that meets the unjudged format counts it as a mismatch.
    ).not.toBe('compatible');
  });
  it('a required property with an empty schema is still required (in an open then)', () => {
    const conditional = (then: JsonSchema): JsonSchema => ({
      type: 'object',
      properties: { k: { type: 'string' }, y: {} },
      if: { required: ['k'] },
      then,
    });
    expect(
      verdict(
        conditional({ properties: { k: {} } }),
        conditional({ properties: { k: {}, y: {} }, required: ['y'] }),
      ),
    ).toBe('incompatible: REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/then/properties/y');
  });
  it('contains: {} still asks for one item', () => {
    expect(verdict(withX({ type: 'array' }), withX({ type: 'array', contains: {} }))).toBe(
      'incompatible: MIN_CONTAINS_ADDED #/properties/x/contains',
    );
  });
  // Found by hand after the tuple families were added: `additionalItems` binds only after an
  // `items` array (draft-07) and never in 2020-12, yet was read as closing the array.
  it('additionalItems without a tuple (draft-07) or in 2020-12 closes nothing', () => {
    const array = (x: JsonSchema, dialect?: string): JsonSchema => ({
      ...(dialect === undefined ? {} : { $schema: dialect }),
      type: 'object',
      properties: { x: { type: 'array', ...(x as object) } },
    });
    expect(
      verdict(
        array({ items: { type: 'string' }, additionalItems: false }),
        array({ items: [{ type: 'string' }], additionalItems: false }),
      ),
    ).toMatch(/^incompatible: ADDITIONAL_ITEMS_REMOVED #\/properties\/x\/additionalItems/);
    expect(
      verdict(array({ additionalItems: false }), array({ items: [{}], additionalItems: false })),
    ).toMatch(/^incompatible: ADDITIONAL_ITEMS_REMOVED #\/properties\/x\/additionalItems/);
    expect(
      verdict(
        array({ additionalItems: false }, D2020),
        array({ prefixItems: [{}], items: false }, D2020),
      ),
    ).toMatch(/^incompatible: ADDITIONAL_ITEMS_REMOVED #\/properties\/x\/additionalItems/);
    expect(verdict(array({}), array({ additionalItems: false }))).toBe('compatible');
  });
  // Seed 17908 of the 20,000-pair run: the writer's one member `{"minimum": -5}` (which lets
  // `null` through) was paired with the reader's `type` facet, where the added type went unseen.
  it('a type added beside a combiner of type-less members narrows it', () => {
    for (const keyword of ['anyOf', 'allOf', 'oneOf'])
      expect(
        verdict(
          withX({ [keyword]: [{ minimum: -5 }] }),
          withX({ [keyword]: [{ minimum: -5 }], type: 'number' }),
        ),
      ).toMatch(/^incompatible: .*#\/properties\/x/);
  });
  // Seed 6621 of the 20,000-pair run: a definition B that is a `$ref` to A with an `if`/`then`
  // beside it. Its facets make it "only a $ref", so the chain was followed to A and the condition
  // dropped; ajv applies it (the reader rejects {"a": 1}). Also right at the property, in both
  // dialects, and 2020-12 `dependencies` (not a 2020-12 keyword, yet ajv applies it).
  it('keywords beside a $ref that are no facet (if/then, 2020-12 dependencies) still bind the reader', () => {
    const condition = { if: { required: ['a'] }, then: { required: ['b'] } };
    for (const [dialect, definitions] of [
      [undefined, 'definitions'],
      [D2020, '$defs'],
    ] as const) {
      const payload = (x: JsonSchema, b: JsonSchema = { $ref: `#/${definitions}/A` }) => ({
        ...(dialect === undefined ? {} : { $schema: dialect }),
        [definitions]: { A: {}, B: b },
        type: 'object',
        properties: { x },
      });
      const toA = { $ref: `#/${definitions}/A` };
      const toB = { $ref: `#/${definitions}/B` };
      expect(verdict(payload(toB), payload(toB, { ...toA, ...condition }))).toBe(
        'refused: $ref at #/properties/x/$ref',
      );
      expect(verdict(payload(toA), payload({ ...toA, ...condition }))).toBe(
        'refused: $ref at #/properties/x/$ref',
      );
      // The same condition on both sides narrows both alike; dropping it only widens.
      expect(verdict(payload({ ...toA, ...condition }), payload({ ...toA, ...condition }))).toBe(
        'compatible',
      );
      expect(verdict(payload(toB, { ...toA, ...condition }), payload(toB))).toBe('compatible');
    }
    const dependencies = { dependencies: { a: ['b'] } };
    const payload = (x: JsonSchema) => ({
      $schema: D2020,
      $defs: { A: {} },
      type: 'object',
      properties: { x },
    });
    expect(
      verdict(payload({ $ref: '#/$defs/A' }), payload({ $ref: '#/$defs/A', ...dependencies })),
    ).toBe('refused: $ref at #/properties/x/$ref');
  });
});

describe('evgen check', () => {
  it('an unjudged change is a problem in the new version’s file, at the keyword', () => {
    const catalog = catalogOf(
      eventWith([withX({ type: 'string' }), withX({ type: 'string', format: 'email' })], {
        mode: 'BACKWARD',
      }),
    );
    let problem: ComparisonProblem | undefined;
    try {
      checkCatalog(catalog);
    } catch (error) {
      if (!(error instanceof ComparisonProblem)) throw error;
      problem = error;
    }
    expect(problem?.diagnostic).toMatchObject({
      code: 'unjudged-change',
      file: expect.stringContaining('test/Thing/v2.schema.json'),
      pointer: '/properties/x/format',
      message: expect.stringMatching(
        /^evgen cannot judge changes to "format" — comparing v2 with v1 of test\.Thing/,
      ),
    });
  });
});
