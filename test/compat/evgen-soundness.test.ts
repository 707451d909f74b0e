/**
 * Property-based soundness of policy `evgen`: whenever it calls a change BACKWARD compatible, every
 * instance the original's writer view accepts must be accepted by the update's reader view —
 * the schemas the generated validators enforce on each side, compiled with the same ajv options.
 * Pairs are random related schemas (test/support/schema-pairs.ts), instances come from the
 * instance generator; both are seeded, so a failure reproduces. Pairs evgen refuses to judge
 * (UnjudgedChangeError) are counted, not checked.
 */
import { describe, expect, it } from 'vitest';
import { checkReadable, UnjudgedChangeError } from 'evgen';
import { readerSchema, writerSchema } from '../../src/schema/views.js';
import { validator } from './support/view-validators.js';
import { editedSchema, randomPayloadSchema, type PairDialect } from '../support/schema-pairs.js';
import { schemaInstances, seededRandom } from '../support/schema-instances.js';

// SOUNDNESS_PAIRS=5000 for a deeper local run; the default keeps `npm test` fast. A long run can
// be split into seed ranges run side by side: SOUNDNESS_FROM=10001 SOUNDNESS_PAIRS=10000 runs
// seeds 10001–20000 (the same pairs as those seeds of one long run).
const PAIRS = Number(process.env.SOUNDNESS_PAIRS ?? 300);
const FROM = Number(process.env.SOUNDNESS_FROM ?? 1);
const LAST = FROM + PAIRS - 1;
const INSTANCES_PER_SCHEMA = 25;

interface SoundnessReport {
  pairs: number;
  compatible: number;
  refused: number;
  instancesChecked: number;
  failures: string[];
}

function checkPairs(): SoundnessReport {
  const report: SoundnessReport = {
    pairs: 0,
    compatible: 0,
    refused: 0,
    instancesChecked: 0,
    failures: [],
  };
  for (let seed = FROM; seed <= LAST; seed++) {
    const random = seededRandom(seed);
    const dialect: PairDialect = random() < 0.5 ? 'draft-07' : '2020-12';
    const original = randomPayloadSchema(random, dialect);
    const update = editedSchema(original, random, dialect);
    report.pairs++;
    let compatible: boolean;
    try {
      compatible = checkReadable(original, update, 'evgen').compatible;
    } catch (error) {
      if (!(error instanceof UnjudgedChangeError)) throw error;
      report.refused++;
      continue;
    }
    if (!compatible) continue;
    report.compatible++;
    const writerView = writerSchema(original);
    const writer = validator(writerView);
    const reader = validator(readerSchema(update));
    const options = { seed, count: INSTANCES_PER_SCHEMA };
    const instances = [
      ...schemaInstances(writerView, options),
      ...schemaInstances(original, { ...options, extraPropertyChance: 0 }),
      ...schemaInstances(update, options),
    ];
    for (const instance of instances) {
      if (!writer(instance)) continue;
      report.instancesChecked++;
      if (reader(instance)) continue;
      report.failures.push(
        [
          `seed ${seed}: evgen says BACKWARD compatible, but the update's reader rejects an instance the original's writer accepts`,
          `  original: ${JSON.stringify(original)}`,
          `  update:   ${JSON.stringify(update)}`,
          `  instance: ${JSON.stringify(instance)}`,
        ].join('\n'),
      );
      break;
    }
  }
  return report;
}

describe('policy evgen is sound', () => {
  it(
    `random pairs (seeds ${FROM}–${LAST}): BACKWARD compatible ⇒ the update's reader accepts what the original's writer accepts`,
    () => {
      const report = checkPairs();
      console.log(
        `evgen soundness: seeds ${FROM}–${LAST}, ${report.pairs} pairs, ${report.compatible} judged compatible, ${report.refused} refused, ${report.instancesChecked} writer-valid instances checked`,
      );
      expect(report.failures.slice(0, 5).join('\n\n')).toBe('');
      // The property means something only if enough pairs and instances got that far.
      expect(report.compatible).toBeGreaterThan(PAIRS / 10);
      expect(report.instancesChecked).toBeGreaterThan(report.compatible * 5);
    },
    Math.max(60_000, PAIRS * 40),
  );
});
