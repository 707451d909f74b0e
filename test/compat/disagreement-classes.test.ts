/**
 * The classes of pairs where Confluent's checker and the meaning of a schema part ways (writer →
 * reader; "backward" is the pair as listed, "forward" the reverse). Policies `confluent` and
 * `confluent-lenient` must give Confluent's verdict, including where it is wrong; policy `evgen`
 * must be right: an incompatible verdict comes with a value the writer's view accepts and the
 * reader's view rejects (checked here with the validators' ajv options), and a change it cannot
 * judge is refused. docs/concepts/compatibility.md lists the same classes.
 */
import { describe, expect, it } from 'vitest';
import {
  checkReadable,
  UnjudgedChangeError,
  type CompatibilityPolicy,
  type JsonSchema,
} from 'evgen';
import { readerSchema, writerSchema } from '../../src/schema/views.js';
import { validator } from './support/view-validators.js';

const D2020 = 'https://json-schema.org/draft/2020-12/schema';
const in2020 = (schema: Record<string, unknown>): JsonSchema => ({ $schema: D2020, ...schema });

type Verdict = 'compatible' | 'incompatible' | 'refused';
/** [writer → reader as listed, the reverse]. */
type Both = readonly [Verdict, Verdict];
const C = 'compatible';
const I = 'incompatible';
const R = 'refused';

interface ClassPair {
  readonly name: string;
  readonly writer: JsonSchema;
  readonly reader: JsonSchema;
  readonly confluent: Both;
  /** Same as `confluent` unless given. */
  readonly lenient?: Both;
  readonly evgen: Both;
  /** For each direction evgen calls incompatible: a value the writer accepts and the reader rejects. */
  readonly witness?: { readonly backward?: unknown; readonly forward?: unknown };
}

const PAIRS: readonly ClassPair[] = [
  {
    name: 'C type null beside an object keyword',
    writer: { type: 'null', required: ['a'] },
    reader: { type: 'object' },
    confluent: [C, I],
    evgen: [I, I],
    witness: { backward: null, forward: {} },
  },
  {
    name: 'C type boolean beside a string keyword',
    writer: { type: 'boolean', minLength: 1 },
    reader: { minLength: 1 },
    confluent: [C, I],
    evgen: [C, I],
    witness: { forward: 'ab' },
  },
  {
    name: 'C type ["null"] beside a number keyword',
    writer: { type: ['null'], minimum: 8 },
    reader: { type: ['integer', 'null'] },
    confluent: [I, I],
    evgen: [C, I],
    witness: { forward: 1 },
  },
  {
    name: 'K 2020-12 anyOf member with enum and type (SchemaTranslator.java: SchemaContext.join flattens a member’s groups into the anyOf)',
    writer: in2020({ anyOf: [{ enum: ['x'], type: 'string' }] }),
    reader: in2020({ anyOf: [{}] }),
    confluent: [I, I],
    evgen: [C, I],
    witness: { forward: 1 },
  },
  {
    name: 'K 2020-12 oneOf member gains type null beside minimum (flattened: oneOf of null and a number floor)',
    writer: in2020({ oneOf: [{ minimum: -5 }] }),
    reader: in2020({ oneOf: [{ type: 'null', minimum: -5 }] }),
    confluent: [C, I],
    evgen: [I, C],
    witness: { backward: 0 },
  },
  {
    name: 'K 2020-12 allOf members merged into one (flattened back into the same two allOf members)',
    writer: in2020({ allOf: [{ enum: ['x'] }, { type: 'string' }] }),
    reader: in2020({ allOf: [{ enum: ['x'], type: 'string' }] }),
    confluent: [C, C],
    evgen: [C, C],
  },
  {
    name: 'B $ref to a definition that is only a $ref',
    writer: {
      definitions: { A: {}, B: { $ref: '#/definitions/A' } },
      $ref: '#/definitions/B',
    },
    reader: {
      definitions: { A: { type: 'object' }, B: { $ref: '#/definitions/A' } },
      $ref: '#/definitions/B',
    },
    confluent: [C, C],
    evgen: [I, C],
    witness: { backward: 1 },
  },
  {
    name: 'H draft-07 $ref sibling',
    writer: {},
    reader: {
      definitions: { A: {} },
      $ref: '#/definitions/A',
      required: ['a'],
    },
    confluent: [C, C],
    evgen: [R, C],
  },
  {
    name: 'D additionalProperties {} added',
    writer: { type: 'object' },
    reader: { type: 'object', additionalProperties: {} },
    confluent: [I, C],
    lenient: [C, C],
    evgen: [C, C],
  },
  {
    name: 'D additionalProperties {} → oneOf [{}]',
    writer: { additionalProperties: {} },
    reader: { additionalProperties: { oneOf: [{}] } },
    confluent: [C, C],
    evgen: [C, C],
  },
  {
    name: 'D additionalProperties {} → integer',
    writer: { additionalProperties: {} },
    reader: { additionalProperties: { type: 'integer' } },
    confluent: [I, C],
    evgen: [I, C],
    witness: { backward: { extra: 'text' } },
  },
  {
    name: 'E items {} added',
    writer: { type: 'array' },
    reader: { type: 'array', items: {} },
    confluent: [I, C],
    evgen: [C, C],
  },
  {
    name: 'E items true added',
    writer: { type: 'array' },
    reader: { type: 'array', items: true },
    confluent: [I, C],
    evgen: [C, C],
  },
  {
    name: 'F 2020-12 contains {} added',
    writer: in2020({ type: 'array' }),
    reader: in2020({ type: 'array', contains: {} }),
    confluent: [I, C],
    evgen: [I, C],
    witness: { backward: [] },
  },
  // G: Confluent's NumberSchemaDiff.java reports a lowered exclusiveMaximum only when the old
  // one is above the update's `maximum` (it compares with the new maximum); added, removed and
  // raised ones are reported as written, whatever the maximum.
  {
    name: 'G exclusiveMaximum lowered beside a higher maximum: unseen (NumberSchemaDiff compares the old exclusiveMaximum with the new maximum)',
    writer: { type: 'number', maximum: 200, exclusiveMaximum: 98 },
    reader: { type: 'number', maximum: 200, exclusiveMaximum: 97 },
    confluent: [C, C],
    evgen: [I, C],
    witness: { backward: 97.5 },
  },
  {
    name: 'G exclusiveMaximum lowered above a lower maximum: EXCLUSIVE_MAXIMUM_DECREASED although no value changes verdict',
    writer: { type: 'number', maximum: 50, exclusiveMaximum: 98 },
    reader: { type: 'number', maximum: 50, exclusiveMaximum: 97 },
    confluent: [I, C],
    evgen: [C, C],
  },
  {
    name: 'G exclusiveMaximum added beside a maximum: EXCLUSIVE_MAXIMUM_ADDED (NumberSchemaDiff looks at it whatever the maximum)',
    writer: { type: 'number', maximum: 200 },
    reader: { type: 'number', maximum: 200, exclusiveMaximum: 98 },
    confluent: [I, C],
    evgen: [I, C],
    witness: { backward: 150 },
  },
  {
    name: 'G exclusiveMaximum lowered where the update drops maximum: NumberSchemaDiff throws, the registry refuses',
    writer: { type: 'number', maximum: 200, exclusiveMaximum: 98 },
    reader: { type: 'number', exclusiveMaximum: 97 },
    confluent: [I, I],
    evgen: [I, C],
    witness: { backward: 97.5 },
  },
  {
    name: 'L format without type',
    writer: { format: 'email' },
    reader: { type: 'string' },
    confluent: [C, C],
    evgen: [I, R],
    witness: { backward: 42 },
  },
  {
    name: 'A draft-07 minContains',
    writer: {},
    reader: { minContains: 1 },
    confluent: [C, C],
    evgen: [C, C],
  },
  {
    name: 'A draft-07 dependentSchemas',
    writer: {},
    reader: { dependentSchemas: {} },
    confluent: [C, C],
    evgen: [C, C],
  },
  {
    name: 'A draft-07 unevaluatedProperties',
    writer: {},
    reader: { unevaluatedProperties: false },
    confluent: [C, C],
    evgen: [C, C],
  },
  {
    name: 'A 2020-12 dependencies',
    writer: in2020({}),
    reader: in2020({ dependencies: { a: ['b'] } }),
    confluent: [C, C],
    evgen: [R, C],
  },
  {
    name: 'J 2020-12 default null on a property made required',
    writer: in2020({ properties: { c: {} } }),
    reader: in2020({ properties: { c: { default: null } }, required: ['c'] }),
    confluent: [I, C],
    evgen: [I, C],
    witness: { backward: {} },
  },
];

function verdictOf(writer: JsonSchema, reader: JsonSchema, policy: CompatibilityPolicy): Verdict {
  try {
    return checkReadable(writer, reader, policy).compatible ? C : I;
  } catch (error) {
    if (error instanceof UnjudgedChangeError) return R;
    throw error;
  }
}

const accepts = (schema: JsonSchema, value: unknown) => validator(schema)(value);

describe.each(PAIRS)('$name', (pair) => {
  const both = (policy: CompatibilityPolicy): Both => [
    verdictOf(pair.writer, pair.reader, policy),
    verdictOf(pair.reader, pair.writer, policy),
  ];

  it('confluent: Confluent’s verdicts both ways', () => {
    expect(both('confluent')).toEqual(pair.confluent);
  });

  it('confluent-lenient: Confluent’s LENIENT verdicts both ways', () => {
    expect(both('confluent-lenient')).toEqual(pair.lenient ?? pair.confluent);
  });

  it('evgen: the verdicts by meaning both ways, each incompatible one with a witness value', () => {
    expect(both('evgen')).toEqual(pair.evgen);
    const directions = [
      ['backward', pair.writer, pair.reader, pair.evgen[0]],
      ['forward', pair.reader, pair.writer, pair.evgen[1]],
    ] as const;
    for (const [direction, writer, reader, verdict] of directions) {
      if (verdict !== I) continue;
      const witness = pair.witness?.[direction];
      expect(witness, `${direction} needs a witness`).not.toBeUndefined();
      expect(accepts(writerSchema(writer), witness)).toBe(true);
      expect(accepts(readerSchema(reader), witness)).toBe(false);
    }
  });
});
