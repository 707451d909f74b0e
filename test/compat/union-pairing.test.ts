/**
 * Union branches are paired by their tag values before they are compared in full (a branch pair a
 * tag tells apart is skipped: src/compat/discriminators.ts). The skip must never change a verdict
 * or a report: tagged unions, reordered, with tags and branches edited, give the same result as
 * the exhaustive pairing that compares every branch pair; and a branch must pair with the one of
 * the same tag even when another branch has the same shape.
 */
import { describe, expect, it } from 'vitest';
import { checkReadable } from '../../src/compat/diff-schemas.js';
import type { CompatibilityPolicy, JsonSchema } from '../../src/catalog/model.js';
import { seededRandom } from '../support/schema-instances.js';

const POLICIES: readonly CompatibilityPolicy[] = ['evgen', 'confluent', 'confluent-lenient'];

type Outcome = ReturnType<typeof checkReadable> | { error: string };

function outcome(
  writer: JsonSchema,
  reader: JsonSchema,
  policy: CompatibilityPolicy,
  exhaustive: boolean,
): Outcome {
  try {
    return checkReadable(writer, reader, policy, { exhaustive });
  } catch (error) {
    return { error: String(error) };
  }
}

const tagged = (tag: unknown, maxLength: number, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { kind: tag, value: { type: 'string', maxLength }, ...extra },
  required: ['kind', 'value'],
  additionalProperties: false,
});

describe('union branches paired by tag', () => {
  it('pairs each branch with the branch of its own tag, not with one of the same shape', () => {
    const writer = { oneOf: [tagged({ const: 'a' }, 5), tagged({ const: 'b' }, 10)] };
    // The reader's `a` branch narrowed `value`; its `b` branch has exactly the writer `a`'s shape
    // but for the tag. Pairing by shape alone would call this compatible.
    const reader = { oneOf: [tagged({ const: 'b' }, 5), tagged({ const: 'a' }, 3)] };
    for (const policy of POLICIES) {
      const result = checkReadable(writer, reader, policy);
      expect(result.compatible, policy).toBe(false);
      expect(result).toEqual(checkReadable(writer, reader, policy, { exhaustive: true }));
    }
  });

  it('reads a union whose branches were reordered and widened, with every tag form', () => {
    const forms = [
      (tag: string) => ({ const: tag }),
      (tag: string) => ({ enum: [tag] }),
      (tag: string) => ({ type: 'string', const: tag }),
      (tag: string) => ({ type: 'string', enum: [tag], minLength: 1 }),
    ];
    for (const form of forms) {
      const branches = (widen: number) =>
        Array.from({ length: 30 }, (_, index) => tagged(form(`k${index}`), 10 + index + widen));
      const writer = { oneOf: branches(0) };
      const reader = { oneOf: branches(1).reverse() };
      for (const policy of POLICIES) {
        const result = checkReadable(writer, reader, policy);
        expect(result.compatible, `${JSON.stringify(form('x'))} ${policy}`).toBe(true);
        expect(result.changes.map((change) => change.type)).toContain('MAX_LENGTH_INCREASED');
        expect(result).toEqual(checkReadable(writer, reader, policy, { exhaustive: true }));
        // The other way round every branch narrowed.
        expect(checkReadable(reader, writer, policy).compatible).toBe(false);
      }
    }
  });

  it('gives the exhaustive pairing’s verdict and report on random tagged unions', () => {
    const cases = Number(process.env.UNION_PAIRING_CASES ?? 150);
    let compatible = 0;
    for (let seed = 1; seed <= cases; seed++) {
      const random = seededRandom(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const tagValues = ['a', 'b', 'c', 'd', 1, 2, true, null];
      const tagSchema = (): Record<string, unknown> => {
        const values = tagValues.filter(() => random() < 0.3);
        const form = pick(['const', 'enum', 'typed-const', 'typed-enum', 'plain'] as const);
        const one = values[0] ?? pick(tagValues);
        switch (form) {
          case 'const':
            return { const: one };
          case 'enum':
            return { enum: values.length > 0 ? values : [one] };
          case 'typed-const':
            return { type: typeof one === 'string' ? 'string' : 'integer', const: one };
          case 'typed-enum':
            return {
              type: ['string', 'integer', 'boolean'][Math.floor(random() * 3)],
              enum: values,
            };
          case 'plain':
            return { type: 'string' };
        }
      };
      const branch = () => {
        const properties: Record<string, unknown> = { kind: tagSchema() };
        if (random() < 0.5) properties['sub'] = tagSchema();
        if (random() < 0.7)
          properties['value'] = { type: pick(['string', 'integer']), maxLength: 5 };
        const shape: Record<string, unknown> = {
          type: 'object',
          properties,
          required: Object.keys(properties).filter(() => random() < 0.6),
        };
        if (random() < 0.5) shape['additionalProperties'] = false;
        return shape;
      };
      const edit = (schema: Record<string, unknown>): Record<string, unknown> => {
        const copy = structuredClone(schema);
        const properties = copy['properties'] as Record<string, Record<string, unknown>>;
        const roll = random();
        if (roll < 0.3) properties['kind'] = tagSchema();
        else if (roll < 0.5 && properties['value'] !== undefined)
          properties['value']['maxLength'] = pick([3, 5, 8]);
        else if (roll < 0.6) delete copy['additionalProperties'];
        return copy;
      };
      const count = 2 + Math.floor(random() * 6);
      const writerBranches = Array.from({ length: count }, branch);
      const readerBranches = writerBranches
        .map((schema) => (random() < 0.6 ? edit(schema) : schema))
        .filter(() => random() < 0.9);
      if (random() < 0.3) readerBranches.push(branch());
      readerBranches.sort(() => random() - 0.5);
      const keyword = pick(['oneOf', 'anyOf']);
      const writer: JsonSchema = { [keyword]: writerBranches };
      const reader: JsonSchema = { [pick(['oneOf', 'anyOf'])]: readerBranches };
      for (const policy of POLICIES)
        for (const [from, to] of [
          [writer, reader],
          [reader, writer],
        ] as const) {
          const fast = outcome(from, to, policy, false);
          expect(fast, `seed ${seed} ${policy}`).toEqual(outcome(from, to, policy, true));
          if ('compatible' in fast && fast.compatible) compatible++;
        }
    }
    // The cases must exercise both verdicts to say anything.
    expect(compatible).toBeGreaterThan(cases / 10);
    expect(compatible).toBeLessThan(cases * 5);
  });
});
