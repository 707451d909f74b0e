/** Small catalogs built in memory, for checks that need no files. */
import type {
  Catalog,
  CompatibilityMode,
  CompatibilityPolicy,
  EventDefinition,
  JsonSchema,
} from 'evgen';

export function eventWith(
  schemas: readonly JsonSchema[],
  options: { mode?: CompatibilityMode; policy?: CompatibilityPolicy; name?: string } = {},
): EventDefinition {
  const name = options.name ?? 'Thing';
  return {
    domain: 'test',
    name,
    eventType: `test.${name}`,
    description: 'test event',
    aggregate: 'Thing',
    aggregateId: 'id',
    compatibility: options.mode ?? 'FULL_TRANSITIVE',
    policy: options.policy ?? 'evgen',
    kafka: { topic: 'test.events' },
    rabbitmq: { exchange: 'test', routingKey: `test.${name}` },
    dir: `test/${name}`,
    versions: schemas.map((schema, index) => ({
      version: index + 1,
      file: `test/${name}/v${index + 1}.schema.json`,
      schema,
      bundled: schema,
    })),
  };
}

export function catalogOf(...events: EventDefinition[]): Catalog {
  return { root: '/catalog', events, consumers: [] };
}

/** An object payload with `id` plus the given properties; `required` lists extra required names. */
export function payload(
  properties: Record<string, JsonSchema>,
  required: readonly string[] = [],
  closed = true,
): JsonSchema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { id: { type: 'string' }, ...properties },
    required: ['id', ...required],
    ...(closed ? { additionalProperties: false } : {}),
  };
}
