/**
 * `event.json`, the metadata of one event: read, validated against its metadata schema, and each
 * schema error turned into one precise problem (a code people can search for, the pointer of the
 * offending key, a hint naming the allowed values).
 */
import type { ErrorObject } from 'ajv';
import { pointerSegment, resolvePointer } from '../common/json-pointer.js';
import type { CatalogProblem } from './catalog-error.js';
import { suggestion } from './did-you-mean.js';
import type { LoadContext } from './load-context.js';
import {
  EVENT_JSON_KEYS,
  KAFKA_JSON_KEYS,
  MAX_KAFKA_PARTITIONS,
  PULSAR_JSON_KEYS,
} from './metadata-schemas.js';
import {
  COMPATIBILITY_MODES,
  COMPATIBILITY_POLICIES,
  DEFAULT_KAFKA_PARTITIONS,
  DEFAULT_KAFKA_RETENTION_MS,
  EVENT_ORDERINGS,
  KAFKA_CLEANUP_POLICIES,
  KAFKA_WIRE_FORMATS,
  type CompatibilityMode,
  type CompatibilityPolicy,
  type EventOrdering,
  type KafkaEventTopic,
  type KafkaWireFormat,
  type PulsarEventTopic,
  type RabbitEventRoute,
} from './model.js';
import { displayPath, readJsonFile } from './read-json-file.js';
import { seeDocs } from './doc-sections.js';

/** event.json once it passed its metadata schema. */
export interface EventJson {
  description: string;
  aggregate: string;
  aggregateId: string;
  compatibility?: CompatibilityMode;
  policy?: CompatibilityPolicy;
  eventType?: string;
  kafka?: Omit<KafkaEventTopic, 'wireFormat'> & { wireFormat?: KafkaWireFormat };
  ordering?: EventOrdering;
  rabbitmq?: RabbitEventRoute;
  pulsar?: PulsarEventTopic;
}

/**
 * The declared Kafka settings, without keys the file does not set; the wire format is the
 * event's own, else `catalogWireFormat` (the catalog's default), kept only when records are framed.
 */
export function kafkaEventTopic(
  kafka: NonNullable<EventJson['kafka']>,
  catalogWireFormat: KafkaWireFormat = 'json',
): KafkaEventTopic {
  return {
    topic: kafka.topic,
    ...(kafka.partitions === undefined ? {} : { partitions: kafka.partitions }),
    ...(kafka.retentionMs === undefined ? {} : { retentionMs: kafka.retentionMs }),
    ...(kafka.cleanupPolicy === undefined ? {} : { cleanupPolicy: kafka.cleanupPolicy }),
    ...((kafka.wireFormat ?? catalogWireFormat) === 'confluent'
      ? { wireFormat: 'confluent' as const }
      : {}),
  };
}

/** The declared Pulsar settings, without keys the file does not set. */
export function pulsarEventTopic(pulsar: PulsarEventTopic): PulsarEventTopic {
  return {
    ...(pulsar.tenant === undefined ? {} : { tenant: pulsar.tenant }),
    ...(pulsar.namespace === undefined ? {} : { namespace: pulsar.namespace }),
    topic: pulsar.topic,
    ...(pulsar.partitions === undefined ? {} : { partitions: pulsar.partitions }),
  };
}

function truncate(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The validated event.json, or (when it has problems) only its aggregateId when that one is
 * fine, so the payload schemas are still checked against it in the same run.
 */
export async function readEventJson(
  path: string,
  context: LoadContext,
): Promise<{ meta?: EventJson; aggregateId?: string }> {
  const read = await readJsonFile(path, context.problems);
  if (!read.ok) return {};
  const file = displayPath(path);
  if (context.validateEventJson(read.value)) {
    const meta = read.value as EventJson;
    const reserved = reservedNameProblems(meta, file);
    for (const problem of reserved) context.problems.add(problem);
    return reserved.length === 0
      ? { meta, aggregateId: meta.aggregateId }
      : { aggregateId: meta.aggregateId };
  }
  const aggregateId = (read.value as { aggregateId?: unknown } | null)?.aggregateId;
  const errors = context.validateEventJson.errors ?? [];
  for (const error of errors) context.problems.add(eventJsonProblem(error, file, read.value));
  const aggregateIdOk =
    typeof aggregateId === 'string' &&
    !errors.some((error) => error.instancePath === '/aggregateId');
  return aggregateIdOk ? { aggregateId } : {};
}

/** One precise problem per ajv error of event.json, with a code people can search for. */
function eventJsonProblem(error: ErrorObject, file: string, document: unknown): CatalogProblem {
  const at = error.instancePath;
  const found = resolvePointer(document, at);
  // JSON.stringify escapes quotes and control characters, so the value prints on one line.
  const shown = found.found ? ` ${truncate(JSON.stringify(found.value) ?? '')}` : '';
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') {
    const key = String(params.additionalProperty);
    const known =
      at === ''
        ? EVENT_JSON_KEYS
        : at === '/kafka'
          ? KAFKA_JSON_KEYS
          : at === '/pulsar'
            ? PULSAR_JSON_KEYS
            : ['exchange', 'routingKey'];
    return {
      code: 'unknown-key',
      file,
      pointer: `${at}/${pointerSegment(key)}`,
      message: `unknown key ${JSON.stringify(key)}`,
      hint: suggestion(key, known, `remove it; allowed keys: ${known.join(', ')}`),
    };
  }
  if (error.keyword === 'required') {
    const key = String(params.missingProperty);
    return {
      code: 'missing-key',
      file,
      pointer: at,
      message: `missing required key "${key}"`,
      hint: `add "${key}" (${seeDocs('catalog')})`,
    };
  }
  if (error.keyword === 'enum' && at === '/compatibility') {
    return {
      code: 'unknown-compatibility-mode',
      file,
      pointer: at,
      message: `unknown compatibility mode${shown}`,
      hint: `use one of ${COMPATIBILITY_MODES.join(', ')} (default FULL_TRANSITIVE)`,
    };
  }
  if (error.keyword === 'enum' && at === '/policy') {
    return {
      code: 'unknown-policy',
      file,
      pointer: at,
      message: `unknown compatibility policy${shown}`,
      hint: `use one of ${COMPATIBILITY_POLICIES.join(', ')} (default evgen)`,
    };
  }
  if (error.keyword === 'enum' && at === '/ordering') {
    return {
      code: 'unknown-ordering',
      file,
      pointer: at,
      message: `unknown ordering${shown}`,
      hint: `use one of ${EVENT_ORDERINGS.join(', ')} (default relaxed: failed records go to retry topics)`,
    };
  }
  if (error.keyword === 'enum' && at === '/kafka/wireFormat') {
    return {
      code: 'unknown-wire-format',
      file,
      pointer: at,
      message: `unknown Kafka wire format${shown}`,
      hint: `use one of ${KAFKA_WIRE_FORMATS.join(', ')} (default: the catalog's wireFormat, else json; ${seeDocs('wire-format')})`,
    };
  }
  if (error.keyword === 'enum' && at === '/kafka/cleanupPolicy') {
    return {
      code: 'invalid-event-json',
      file,
      pointer: at,
      message: `unknown Kafka cleanup policy${shown}`,
      hint: `use one of ${KAFKA_CLEANUP_POLICIES.join(', ')} (default delete)`,
    };
  }
  const hints: Record<string, string> = {
    '/aggregate': 'a PascalCase name such as "Order"',
    '/aggregateId': 'the name of a required string property of the payload, e.g. "orderId"',
    '/eventType':
      'dot-separated identifiers, e.g. "order.OrderCreated" (the default is <domain>.<EventName>)',
    '/kafka/topic': 'letters, digits, ".", "_" and "-" only, at most 249 characters',
    '/kafka/partitions': `a whole number from 1 to ${MAX_KAFKA_PARTITIONS} (default ${DEFAULT_KAFKA_PARTITIONS})`,
    '/kafka/retentionMs': `milliseconds as a whole number, -1 for forever (default ${DEFAULT_KAFKA_RETENTION_MS}, 7 days)`,
    '/pulsar/tenant':
      'letters, digits, ".", "_" and "-" only, starting with a letter or digit (default "public")',
    '/pulsar/namespace':
      'letters, digits, ".", "_" and "-" only, starting with a letter or digit (default "default")',
    '/pulsar/topic': 'letters, digits, ".", "_" and "-" only, not starting with "." or "-"',
    '/pulsar/partitions': `a whole number from 1 to ${MAX_KAFKA_PARTITIONS}; leave it out for a non-partitioned topic`,
    '/rabbitmq/exchange': 'letters, digits, ".", "_", ":" and "-" only',
    '/rabbitmq/routingKey': 'letters, digits, ".", "_", ":" and "-" only, e.g. "order.created"',
  };
  return {
    code: 'invalid-event-json',
    file,
    pointer: at,
    message:
      error.keyword === 'pattern'
        ? `${shown.trim()} contains characters that are not allowed here`
        : (error.message ?? `fails "${error.keyword}"`),
    hint: hints[at] ?? seeDocs('catalog'),
  };
}

/**
 * Names the brokers reserve, which their pattern alone allows: Kafka refuses the topics `.` and
 * `..` and keeps `__`-prefixed topics for itself (`__consumer_offsets`, `__transaction_state`);
 * Pulsar keeps `__`-prefixed topics too and names partitions `<topic>-partition-<n>`;
 * RabbitMQ refuses to declare exchanges named `amq.*` (403 ACCESS_REFUSED), which it owns.
 */
function reservedNameProblems(meta: EventJson, file: string): CatalogProblem[] {
  const problems: CatalogProblem[] = [];
  const topic = meta.kafka?.topic;
  if (topic !== undefined && (topic === '.' || topic === '..' || topic.startsWith('__'))) {
    problems.push({
      code: 'reserved-name',
      file,
      pointer: '/kafka/topic',
      message: `${JSON.stringify(topic)} is reserved by Kafka (${topic.startsWith('__') ? 'names starting with "__" are its internal topics, such as __consumer_offsets' : 'Kafka refuses "." and ".." as topic names'})`,
      hint: 'name the topic after its domain, e.g. "order.events"',
    });
  }
  const pulsarTopic = meta.pulsar?.topic;
  if (pulsarTopic !== undefined) {
    const reason = pulsarTopic.startsWith('__')
      ? 'names starting with "__" are its system topics, such as __change_events'
      : /-partition-\d+$/.test(pulsarTopic)
        ? 'a name ending in "-partition-<n>" is one partition of a partitioned topic'
        : undefined;
    if (reason !== undefined) {
      problems.push({
        code: 'reserved-name',
        file,
        pointer: '/pulsar/topic',
        message: `${JSON.stringify(pulsarTopic)} is reserved by Pulsar (${reason})`,
        hint: 'name the topic after its domain, e.g. "order.events"',
      });
    }
  }
  const exchange = meta.rabbitmq?.exchange;
  if (exchange !== undefined && exchange.toLowerCase().startsWith('amq.')) {
    problems.push({
      code: 'reserved-name',
      file,
      pointer: '/rabbitmq/exchange',
      message: `${JSON.stringify(exchange)} is reserved by RabbitMQ (exchanges named "amq." are its own; declaring one is refused with 403 ACCESS_REFUSED)`,
      hint: 'name the exchange after its domain, e.g. "order"',
    });
  }
  return problems;
}
