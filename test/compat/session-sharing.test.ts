/**
 * A catalog check runs every pair of an event's versions in one ComparisonSession, which shares
 * policy views, node identities and the reference-free subschema pairs already compared
 * (SettledPairs). Sharing must only save work: each comparison in a session gives exactly what
 * it gives alone — the same changes, or the same refusal. Checked on generated version families
 * (an original, edits of it and edits of those, in both dialects) under every policy, and on
 * Confluent's published cases, every pair both ways.
 */
import { describe, expect, it } from 'vitest';
import type { CompatibilityPolicy, JsonSchema } from '../../src/catalog/model.js';
import { checkReadable, ComparisonSession } from '../../src/compat/diff-schemas.js';
import { POLICIES } from '../../src/compat/policy.js';
import { editedSchema, randomPayloadSchema, type PairDialect } from '../support/schema-pairs.js';
import { seededRandom } from '../support/schema-instances.js';
import { loadConfluentCases } from './support/confluent-cases.js';

const policies = Object.keys(POLICIES) as CompatibilityPolicy[];

function outcome(run: () => unknown): unknown {
  try {
    return run();
  } catch (error) {
    return { refused: (error as Error).name, message: (error as Error).message };
  }
}

/** Every ordered pair of `versions`, alone and in one session: the outcomes side by side. */
function compareAloneAndShared(versions: readonly JsonSchema[], policy: CompatibilityPolicy) {
  const session = new ComparisonSession();
  const alone: unknown[] = [];
  const shared: unknown[] = [];
  for (const writer of versions)
    for (const reader of versions) {
      if (writer === reader) continue;
      alone.push(outcome(() => checkReadable(writer, reader, policy)));
      shared.push(outcome(() => checkReadable(writer, reader, policy, { session })));
    }
  return { alone, shared };
}

function family(seed: number): JsonSchema[] {
  const random = seededRandom(seed);
  const dialect: PairDialect = random() < 0.5 ? 'draft-07' : '2020-12';
  const v1 = randomPayloadSchema(random, dialect);
  const v2 = editedSchema(v1, random, dialect);
  const v3 = editedSchema(v2, random, dialect);
  return [v1, v2, v3, editedSchema(v1, random, dialect)];
}

describe('comparisons sharing a session', () => {
  it.each(policies)('give what they give alone: generated version families, %s', (policy) => {
    for (let seed = 1; seed <= 60; seed++) {
      const { alone, shared } = compareAloneAndShared(family(seed), policy);
      expect(shared, `seed ${seed}`).toEqual(alone);
    }
  });

  it.each(policies)('give what they give alone: Confluent cases, %s', (policy) => {
    for (const file of ['diff-schema-examples.json', 'diff-combined-schema-examples.json']) {
      const cases = loadConfluentCases(file);
      // One session for a whole file: unrelated schemas meet the same subschemas too.
      const versions = cases.flatMap((testCase) => [
        testCase.original_schema,
        testCase.update_schema,
      ]);
      const session = new ComparisonSession();
      for (let index = 0; index + 1 < versions.length; index += 2) {
        const [original, update] = [versions[index]!, versions[index + 1]!];
        for (const [writer, reader] of [
          [original, update],
          [update, original],
        ] as const)
          expect(
            outcome(() => checkReadable(writer, reader, policy, { session })),
            `${file} #${index / 2}`,
          ).toEqual(outcome(() => checkReadable(writer, reader, policy)));
      }
    }
  });
});
