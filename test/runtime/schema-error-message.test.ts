/**
 * The runtime's messages for validator errors (generated validators carry none) are word for word
 * the ones ajv writes when compiled with messages: every keyword ajv or ajv-formats reports, in
 * each dialect, with parameters that need care (type lists, quotes in patterns, fractions,
 * one vs several dependencies, contains with and without a maximum).
 */
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { newAjv } from '../../src/codegen/targets/validators.js';
import { schemaErrorMessage } from '../../src/runtime/schema-error-message.js';
import type { Dialect } from '../../src/schema/views.js';

const addFormats = addFormatsModule.default;

/** [dialect, schema, failing instances]: each instance fails at least one keyword. */
const CASES: [Dialect, object, unknown[]][] = [
  ['draft-07', { type: 'string' }, [1, null]],
  ['draft-07', { type: ['string', 'null'] }, [1]],
  ['draft-07', { type: 'integer' }, [1.5]],
  ['draft-07', { format: 'uuid' }, ['x']],
  [
    'draft-07',
    { format: 'date', formatMinimum: '2020-01-01', formatExclusiveMaximum: '2030-01-01' },
    ['2019-01-01', '2030-01-01'],
  ],
  [
    'draft-07',
    { format: 'date', formatMaximum: '2020-01-01', formatExclusiveMinimum: '2010-01-01' },
    ['2021-01-01', '2010-01-01'],
  ],
  ['draft-07', { pattern: '^a"b\'c\\\\$' }, ['x']],
  ['draft-07', { enum: ['a', 1, null] }, ['b']],
  ['draft-07', { const: { a: 1 } }, [{ a: 2 }]],
  ['draft-07', { required: ['a', 'b c'], properties: { a: {} } }, [{}]],
  ['draft-07', { properties: { a: {} }, additionalProperties: false }, [{ b: 1 }]],
  ['draft-07', { minLength: 2, maxLength: 3 }, ['a', 'abcd']],
  ['draft-07', { minItems: 1, maxItems: 2 }, [[], [1, 2, 3]]],
  ['draft-07', { minProperties: 1, maxProperties: 1 }, [{}, { a: 1, b: 2 }]],
  ['draft-07', { minimum: 0, maximum: 10.5 }, [-1, 11]],
  ['draft-07', { exclusiveMinimum: 0, exclusiveMaximum: 1 }, [0, 1]],
  ['draft-07', { multipleOf: 0.01 }, [0.001]],
  ['draft-07', { uniqueItems: true }, [[1, 2, 1]]],
  ['draft-07', { items: [{ type: 'string' }], additionalItems: false }, [['a', 1]]],
  ['draft-07', { contains: { type: 'string' } }, [[1]]],
  ['draft-07', { dependencies: { a: ['b'], c: ['d', 'e'] } }, [{ a: 1 }, { c: 1 }]],
  ['draft-07', { propertyNames: { maxLength: 1 } }, [{ ab: 1 }]],
  ['draft-07', { not: { type: 'string' } }, ['a']],
  ['draft-07', { anyOf: [{ type: 'string' }, { type: 'integer' }] }, [true]],
  ['draft-07', { oneOf: [{ type: 'number' }, { type: 'integer' }] }, [1, 'a']],
  [
    'draft-07',
    { if: { type: 'string' }, then: { minLength: 2 }, else: { type: 'integer' } },
    ['a', true],
  ],
  ['draft-07', { properties: { a: false } }, [{ a: 1 }]],
  ['2020-12', { prefixItems: [{ type: 'string' }], items: false }, [['a', 1]]],
  ['2020-12', { prefixItems: [{ type: 'string' }], unevaluatedItems: false }, [['a', 1]]],
  ['2020-12', { properties: { a: {} }, unevaluatedProperties: false }, [{ b: 1 }]],
  [
    '2020-12',
    { contains: { type: 'string' }, minContains: 2, maxContains: 3 },
    [['a'], ['a', 'b', 'c', 'd']],
  ],
  ['2020-12', { dependentRequired: { a: ['b'], c: ['d', 'e'] } }, [{ a: 1 }, { c: 1 }]],
  ['2020-12', { minimum: 1 }, [0]],
];

describe('schemaErrorMessage', () => {
  it.each(CASES.map((testCase, index) => [index, ...testCase] as const))(
    'case %i (%s): the message ajv writes',
    (_index, dialect, schema, instances) => {
      const ajv = newAjv(dialect, { messages: true });
      addFormats(ajv);
      const validate = ajv.compile(schema);
      let checked = 0;
      for (const instance of instances) {
        expect(validate(instance), JSON.stringify(instance)).toBe(false);
        for (const error of validate.errors ?? []) {
          expect(schemaErrorMessage(error.keyword, error.params), error.keyword).toBe(
            error.message,
          );
          checked += 1;
        }
      }
      expect(checked).toBeGreaterThanOrEqual(instances.length);
    },
  );

  it('names the keyword when ajv reports one it does not know', () => {
    expect(schemaErrorMessage('x-custom', {})).toBe('fails x-custom');
    expect(schemaErrorMessage('constructor', {})).toBe('fails constructor');
  });
});
