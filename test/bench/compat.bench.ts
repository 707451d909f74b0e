/**
 * Confluent's slowest held-out pair (issue #20: < 0.5 s both directions), against that budget.
 *
 * Compatibility checking, every row against another checker doing the same work in the same run,
 * json-schema-diff (one call per pair reports additions and removals, i.e. both directions):
 * in process, a synthetic catalog of 20 events × 3 versions (FULL_TRANSITIVE, evgen policy), and
 * oneOf pairs of 10, 25, 50 and 100 tagged object branches against a copy with every branch
 * changed. An untagged 100-branch pair, where every branch must be compared with every other, is
 * measured against the budget of 1 s per pair only.
 *
 * End to end at catalog scale (EVGEN_BENCH_SIZES, default 10,100; 1000 is the goal's size): the
 * `evgen check` CLI from dist/ in a fresh process (loading and bundling the catalog included;
 * without a cache every schema is known to compile too, by ajv where certainlyCompiles cannot
 * tell; with a primed cache no schema is compiled, and no unchanged version is bundled again)
 * against json-schema-diff of the same pairs from the same files, also in a fresh process
 * (test/bench/build-child.mjs), CPU time of each. Goals: ≤ 5 s at 1000 events and
 * ≥ 10× faster than json-schema-diff (ratio ≤ 0.1).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import jsonSchemaDiff from 'json-schema-diff';
import { checkReadable } from '../../src/compat/diff-schemas.js';
import { checkCatalog } from '../../src/compat/check-catalog.js';
import type { Catalog, EventDefinition, JsonSchema } from '../../src/catalog/model.js';
import { recursiveTrade } from '../support/recursive-trade.js';
import { writeSyntheticCatalog } from '../support/synthetic-catalog.js';
import { fromSamples, median, SAMPLES, SMOKE, type BenchResult } from './bench-result.js';
import { SIZES, timed } from './build.bench.js';

const VERSIONS = 3;
/** Events of the catalog both checkers run on (json-schema-diff is too slow for all 200). */
const SHARED_EVENTS = SMOKE ? 3 : 20;
/** Branch counts of the oneOf pairs (the growth with n shows how branches are paired). */
const BRANCH_COUNTS = SMOKE ? [10] : [10, 25, 50, 100];
const PAIR_BUDGET_MS = 1000;
/** Issue #20's budget for Confluent's slowest held-out pair, both directions. */
const HELD_OUT_BUDGET_MS = 500;

/** Confluent's slowest held-out pair, both directions under each policy, against its budget. */
async function heldOutPair(): Promise<BenchResult[]> {
  const original = recursiveTrade('string');
  const update = recursiveTrade('number');
  const rows: BenchResult[] = [];
  for (const policy of ['confluent', 'evgen'] as const) {
    const both: number[] = [];
    const outcomes = new Set<string>();
    // Timed to the verdict or to the refusal: a comparison past its limits stops with one.
    const verdict = (writer: JsonSchema, reader: JsonSchema) => () => {
      try {
        outcomes.add(
          checkReadable(writer, reader, policy).compatible ? 'compatible' : 'incompatible',
        );
      } catch (error) {
        outcomes.add(`refused (${(error as Error).message.replace(/ at #.*$/, '')})`);
      }
    };
    for (let sample = 0; sample < SAMPLES; sample++) {
      const [backward] = await samples(1, verdict(original, update));
      const [forward] = await samples(1, verdict(update, original));
      both.push(backward! + forward!);
    }
    const slowest = Math.max(...both);
    rows.push(
      fromSamples(
        {
          name: `Confluent's slowest held-out pair (recursive oneOf of 12 kinds, one id string → number), both directions, policy ${policy}`,
          unit: 'ms',
          baselineName: `budget ${HELD_OUT_BUDGET_MS} ms`,
          goal: { ratio: 1, better: 'lower' },
          note: `${[...outcomes].join(', ')}; slowest sample ${slowest.toFixed(0)} ms: ${slowest <= HELD_OUT_BUDGET_MS ? 'met' : 'NOT met'}`,
        },
        both,
        both.map(() => HELD_OUT_BUDGET_MS),
      ),
    );
  }
  return rows;
}

function payloadSchema(event: number, version: number): JsonSchema {
  const properties: Record<string, unknown> = {
    id: { type: 'string', format: 'uuid' },
    occurred: { type: 'string', format: 'date-time' },
    amount: { $ref: '#/definitions/money' },
    status: { type: 'string', enum: ['new', 'open', 'closed'] },
    count: { type: 'integer', minimum: 0, maximum: 1000 + event },
    tags: { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 20 },
    lines: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        properties: {
          sku: { type: 'string', pattern: '^[A-Z0-9-]{3,32}$' },
          quantity: { type: 'integer', minimum: 1 },
          price: { $ref: '#/definitions/money' },
        },
        required: ['sku', 'quantity', 'price'],
        additionalProperties: false,
      },
    },
    note: { anyOf: [{ type: 'string', maxLength: 200 }, { type: 'null' }] },
  };
  const required = ['id', 'occurred', 'amount', 'status', 'lines'];
  if (version >= 2) properties[`extra${event}`] = { type: 'string', minLength: 1 };
  // Optional: a default does not make a validator accept data without the property.
  if (version >= 3) properties['priority'] = { type: 'integer', default: 0 };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: `Event${event}`,
    type: 'object',
    properties,
    required,
    additionalProperties: false,
    definitions: {
      money: {
        type: 'object',
        properties: {
          amountMinor: { type: 'integer', minimum: 0 },
          currency: { type: 'string', pattern: '^[A-Z]{3}$' },
        },
        required: ['amountMinor', 'currency'],
        additionalProperties: false,
      },
    },
  };
}

function syntheticCatalog(size: number): Catalog {
  const events: EventDefinition[] = [];
  for (let event = 0; event < size; event++) {
    const name = `Event${String(event).padStart(3, '0')}`;
    events.push({
      domain: 'bench',
      name,
      eventType: `bench.${name}`,
      description: 'synthetic',
      aggregate: 'Thing',
      aggregateId: 'id',
      compatibility: 'FULL_TRANSITIVE',
      policy: 'evgen',
      kafka: { topic: 'bench.events' },
      rabbitmq: { exchange: 'bench', routingKey: `bench.${name}` },
      dir: `bench/${name}`,
      versions: Array.from({ length: VERSIONS }, (_, index) => {
        const schema = payloadSchema(event, index + 1);
        return {
          version: index + 1,
          file: `bench/${name}/v${index + 1}.schema.json`,
          schema,
          bundled: schema,
        };
      }),
    });
  }
  return { root: '/bench', events, consumers: [] };
}

/** ms of each of SAMPLES runs of `body`. */
async function samples(count: number, body: () => unknown): Promise<number[]> {
  const times: number[] = [];
  for (let sample = 0; sample < count; sample++) {
    const started = performance.now();
    await body();
    times.push(performance.now() - started);
  }
  return times;
}

/** json-schema-diff over every pair evgen check compares in a FULL_TRANSITIVE catalog. */
async function jsonSchemaDiffCatalog(catalog: Catalog): Promise<void> {
  for (const event of catalog.events)
    for (const newer of event.versions)
      for (const older of event.versions.filter((version) => version.version < newer.version))
        await jsonSchemaDiff.diffSchemas({
          sourceSchema: older.bundled,
          destinationSchema: newer.bundled,
        });
}

/**
 * A oneOf of object branches and a copy with every branch changed. Tagged branches are told apart
 * by a `kind` const (how real unions are written); untagged ones only by their constraints, so
 * the checker has to compare every branch with every other.
 */
function oneOfPair(branches: number, tagged: boolean): [JsonSchema, JsonSchema] {
  const branch = (index: number, maxLength: number, valueType = 'string') => ({
    type: 'object',
    properties: {
      ...(tagged ? { kind: { const: `k${index}` } } : {}),
      value: valueType === 'string' ? { type: 'string', maxLength } : { type: valueType },
    },
    required: tagged ? ['kind', 'value'] : ['value'],
    additionalProperties: false,
  });
  const schema = (changed: boolean): JsonSchema => ({
    $schema: 'http://json-schema.org/draft-07/schema#',
    oneOf: Array.from({ length: branches }, (_, index) =>
      branch(
        index,
        10 + index + (changed ? 1 : 0),
        changed && index === branches >> 1 ? 'integer' : 'string',
      ),
    ),
  });
  return [schema(false), schema(true)];
}

/** Both directions of one pair, SAMPLES times: the budget holds for the pair's slowest sample. */
async function bothDirections(original: JsonSchema, update: JsonSchema): Promise<number[]> {
  const both: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample++) {
    const [backward] = await samples(1, () => checkReadable(original, update, 'evgen'));
    const [forward] = await samples(1, () => checkReadable(update, original, 'evgen'));
    both.push(backward! + forward!);
  }
  return both;
}

function budgetNote(both: readonly number[]): string {
  const slowest = Math.max(...both);
  return `slowest sample ${slowest.toFixed(0)} ms; budget ${PAIR_BUDGET_MS} ms per pair: ${
    slowest <= PAIR_BUDGET_MS ? 'met' : 'NOT met'
  }`;
}

async function versusJsonSchemaDiff(): Promise<BenchResult[]> {
  const catalog = syntheticCatalog(SHARED_EVENTS);
  const pairs = (SHARED_EVENTS * VERSIONS * (VERSIONS - 1)) / 2;
  checkCatalog(catalog);
  await jsonSchemaDiffCatalog(catalog);
  const catalogRow = fromSamples(
    {
      name: `evgen check (${SHARED_EVENTS}×${VERSIONS} catalog)`,
      unit: 'ms',
      baselineName: 'json-schema-diff of the same pairs',
      note: `${pairs} pairs; evgen checks both directions, json-schema-diff reports both in one call per pair`,
    },
    await samples(SAMPLES, () => checkCatalog(catalog)),
    await samples(SAMPLES, () => jsonSchemaDiffCatalog(catalog)),
  );

  const rows = [catalogRow];
  for (const branches of BRANCH_COUNTS) {
    const [original, update] = oneOfPair(branches, true);
    const both = await bothDirections(original, update);
    // json-schema-diff needs seconds to minutes on these pairs: one sample.
    const baseline = await samples(1, () =>
      jsonSchemaDiff.diffSchemas({ sourceSchema: original, destinationSchema: update }),
    );
    rows.push(
      fromSamples(
        {
          name: `evgen diff, tagged oneOf of ${branches} branches vs every branch changed (both directions)`,
          unit: 'ms',
          baselineName: 'json-schema-diff of the same pair (1 sample)',
          note: budgetNote(both),
        },
        both,
        baseline,
      ),
    );
  }
  // Untagged: no cheap pairing applies, every branch pair is compared (against the budget only;
  // json-schema-diff takes minutes here).
  const branches = BRANCH_COUNTS[BRANCH_COUNTS.length - 1]!;
  const both = await bothDirections(...oneOfPair(branches, false));
  rows.push(
    fromSamples(
      {
        name: `evgen diff, untagged oneOf of ${branches} branches vs every branch changed (both directions)`,
        unit: 'ms',
        baselineName: `budget ${PAIR_BUDGET_MS} ms`,
        goal: { ratio: 1, better: 'lower' },
        note: budgetNote(both),
      },
      both,
      both.map(() => PAIR_BUDGET_MS),
    ),
  );
  return rows;
}

/** `evgen check` end to end vs json-schema-diff of the same pairs, per catalog size. */
async function catalogScale(): Promise<BenchResult[]> {
  const repo = fileURLToPath(new URL('../../', import.meta.url));
  // The CLI is measured as users run it: compiled, from dist/ (brought up to date first).
  await promisify(execFile)(
    process.execPath,
    [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: repo },
  );
  const results: BenchResult[] = [];
  for (const size of SIZES) {
    const dir = mkdtempSync(join(tmpdir(), `evgen-bench-check-${size}-`));
    try {
      const events = join(dir, 'events');
      writeSyntheticCatalog(events, { events: size });
      const cache = join(dir, 'cache');
      // Cold: every schema compiled (a fresh CI checkout). Warm: the cache knows which schemas
      // compile and how versions bundled (a check after a build or an earlier check), primed
      // once before sampling.
      const cold = ['evgen', 'check', '--events', events, '--no-cache'];
      const warm = ['evgen', 'check', '--events', events, '--cache-dir', cache];
      await timed(warm);
      const runs: Record<'cold' | 'warm' | 'baseline', Awaited<ReturnType<typeof timed>>[]> = {
        cold: [],
        warm: [],
        baseline: [],
      };
      // Alternated, so every side sees the same load on a shared machine.
      for (let sample = 0; sample < SAMPLES; sample++) {
        runs.cold.push(await timed(cold));
        runs.warm.push(await timed(warm));
        runs.baseline.push(await timed(['json-schema-diff', events]));
      }
      if ([...runs.cold, ...runs.warm].some((run) => (run as { code?: number }).code !== 0))
        throw new Error(`evgen check of the synthetic ${size}-event catalog did not pass`);
      const cpu = (list: readonly { cpuMs: number }[]) => list.map((run) => run.cpuMs);
      for (const kind of ['cold', 'warm'] as const) {
        const wall = runs[kind].map((run) => run.wallMs);
        const goal =
          size === 1000 ? (median(cpu(runs[kind])) <= 5000 ? 'met' : 'NOT met') : 'not this size';
        results.push(
          fromSamples(
            {
              name: `evgen check CLI end to end, ${size} events, ${kind === 'cold' ? 'no cache' : 'warm build cache'}, CPU ms`,
              unit: 'ms',
              baselineName: 'json-schema-diff of the same pairs from the same files',
              goal: { ratio: 0.1, better: 'lower' },
              note: `fresh processes; evgen loads the catalog${kind === 'cold' ? ', bundles every schema and knows it compiles (ajv only where certainlyCompiles cannot tell),' : ''} and checks both directions; wall ${Math.round(median(wall))} ms [${Math.round(Math.min(...wall))}–${Math.round(Math.max(...wall))}]; goal at 1000 events ≤ 5000 ms: ${goal}`,
            },
            cpu(runs[kind]),
            cpu(runs.baseline),
          ),
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}

export async function run(): Promise<BenchResult[]> {
  return [...(await heldOutPair()), ...(await versusJsonSchemaDiff()), ...(await catalogScale())];
}
