/**
 * Compatibility check of a synthetic catalog: 200 events × 3 versions, FULL_TRANSITIVE, evgen
 * policy (600 version pairs, each in both directions). Baselines measured in the same run:
 * ajv compiling the same 600 schemas (what any validator build pays), and canonicalising and
 * comparing each pair as JSON (the cheapest possible "did it change" check).
 */
import { Ajv } from 'ajv';
import { checkCatalog } from '../../src/compat/check-catalog.js';
import { canonicalJson } from '../../src/common/canonical-json.js';
import type {
  Catalog,
  EventDefinition,
  EventVersion,
  JsonSchema,
} from '../../src/catalog/model.js';
import type { BenchResult } from './bench-result.js';

const EVENTS = 200;
const VERSIONS = 3;

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
  if (version >= 3) {
    properties['priority'] = { type: 'integer', default: 0 };
    required.push('priority');
  }
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

function syntheticCatalog(): Catalog {
  const events: EventDefinition[] = [];
  for (let event = 0; event < EVENTS; event++) {
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

/** Median of `rounds` timings in ms. */
function measure(rounds: number, body: () => void): number {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    body();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export async function run(): Promise<BenchResult[]> {
  const catalog = syntheticCatalog();
  const schemas = catalog.events.flatMap((event) =>
    event.versions.map((version) => version.bundled),
  );
  const pairs = catalog.events.flatMap((event) => {
    const [v1, v2, v3] = event.versions as [EventVersion, EventVersion, EventVersion];
    return [
      [v1, v2],
      [v1, v3],
      [v2, v3],
    ] as const;
  });

  // Warm up (JIT, regex cache) once before measuring.
  const warm = checkCatalog(catalog);
  if (!warm.ok || warm.pairsChecked !== (EVENTS * (VERSIONS * (VERSIONS - 1))) / 2) {
    throw new Error(
      `synthetic catalog should be compatible with 600 pairs checked, got ${warm.violations.length} violations / ${warm.pairsChecked} pairs`,
    );
  }
  const check = measure(5, () => checkCatalog(catalog));
  const compile = measure(3, () => {
    const ajv = new Ajv({ strict: false, validateFormats: false });
    for (const schema of schemas) ajv.compile(schema as object);
  });
  const canonical = measure(5, () => {
    let changed = 0;
    for (const [older, newer] of pairs)
      if (canonicalJson(older.bundled) !== canonicalJson(newer.bundled)) changed++;
    if (changed !== pairs.length) throw new Error('every synthetic pair differs');
  });

  const note = `${EVENTS} events × ${VERSIONS} versions, ${pairs.length} pairs × 2 directions, FULL_TRANSITIVE, evgen policy; median`;
  return [
    {
      name: 'evgen check (200×3 catalog)',
      unit: 'ms',
      subject: check,
      baselineName: 'ajv compile of the 600 schemas',
      baseline: compile,
      note,
    },
    {
      name: 'evgen check (200×3 catalog)',
      unit: 'ms',
      subject: check,
      baselineName: 'canonical JSON compare of the 600 pairs',
      baseline: canonical,
      note,
    },
  ];
}
