/**
 * JSON Schemas for evgen's own catalog files (`event.json`, `_consumers/<name>.json`). Validating
 * them with ajv gives precise JSON pointers; `additionalProperties: false` turns typos into errors.
 * Every property carries a `description` (and its `default`, when the loader applies one): the
 * reference docs/reference/event-json.md is rendered from these schemas and checked by a test.
 */
import {
  DEFAULT_KAFKA_PARTITIONS,
  DEFAULT_KAFKA_RETENTION_MS,
  DEFAULT_PULSAR_NAMESPACE,
  DEFAULT_PULSAR_TENANT,
  COMPATIBILITY_MODES,
  CONSUMER_IN_ORDER_MODES,
  COMPATIBILITY_POLICIES,
  EVENT_ORDERINGS,
  KAFKA_CLEANUP_POLICIES,
  KAFKA_WIRE_FORMATS,
} from './model.js';

/** Keys allowed in event.json, for "did you mean" hints. */
export const EVENT_JSON_KEYS = [
  '$schema',
  'description',
  'aggregate',
  'aggregateId',
  'compatibility',
  'policy',
  'eventType',
  'kafka',
  'ordering',
  'pulsar',
  'rabbitmq',
] as const;

/** Keys allowed under `kafka` in event.json. */
export const KAFKA_JSON_KEYS = [
  'topic',
  'partitions',
  'retentionMs',
  'cleanupPolicy',
  'wireFormat',
] as const;

/** Keys allowed under `pulsar` in event.json. */
export const PULSAR_JSON_KEYS = ['tenant', 'namespace', 'topic', 'partitions'] as const;

/** Pulsar tenant, namespace and topic names: no "/" (it separates them), nothing a URL must escape. */
const PULSAR_NAME = '^[A-Za-z0-9][A-Za-z0-9._-]*$';

/** Upper bound for a declared partition count: far above any sane topic, below Kafka's limits. */
export const MAX_KAFKA_PARTITIONS = 10_000;

/** Characters that have no business in broker names (controls, whitespace, quotes, backslashes). */
const BROKER_NAME = '^[A-Za-z0-9][A-Za-z0-9._:-]*$';

export const eventJsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  required: ['description', 'aggregate', 'aggregateId'],
  properties: {
    $schema: { type: 'string', description: 'A JSON Schema URL for editors; ignored by evgen.' },
    description: {
      type: 'string',
      minLength: 1,
      description: 'What happened, in one sentence; copied into the generated code as a comment.',
    },
    aggregate: {
      type: 'string',
      pattern: '^[A-Z][A-Za-z0-9]*$',
      description:
        "The aggregate the event belongs to (PascalCase, e.g. `Order`): the envelope's `aggregateType`.",
    },
    aggregateId: {
      type: 'string',
      pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
      description:
        "The payload property holding the aggregate's id; required and a string in every version. It becomes the envelope's `aggregateId` and the Kafka record key.",
    },
    compatibility: {
      enum: [...COMPATIBILITY_MODES],
      default: 'FULL_TRANSITIVE',
      description:
        'Which earlier versions a new version must stay compatible with, and in which direction (the modes are explained in docs/concepts/compatibility.md).',
    },
    policy: {
      enum: [...COMPATIBILITY_POLICIES],
      default: 'evgen',
      description:
        "How compatibility is judged: by evgen's meaning (strict writers, tolerant readers) or exactly as Confluent Schema Registry (STRICT or LENIENT).",
    },
    eventType: {
      description:
        'The event type string on the wire. Default `<domain>.<EventName>`, or what `naming.eventType` in evgen.config.json makes of them.',
      type: 'string',
      pattern: '^[A-Za-z][A-Za-z0-9_-]*(\\.[A-Za-z][A-Za-z0-9_-]*)*$',
      maxLength: 200,
    },
    kafka: {
      type: 'object',
      additionalProperties: false,
      required: ['topic'],
      description:
        'Publish the event on Kafka. Without it the event is not on Kafka. Events sharing a topic may each declare a setting once or with equal values; a conflict is a problem.',
      properties: {
        topic: {
          type: 'string',
          pattern: '^[A-Za-z0-9._-]+$',
          maxLength: 249,
          description: 'The topic (before the deployment prefix).',
        },
        partitions: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_KAFKA_PARTITIONS,
          default: DEFAULT_KAFKA_PARTITIONS,
          description: 'Partitions of the topic when `ensureKafkaTopics` creates it.',
        },
        retentionMs: {
          type: 'integer',
          minimum: -1,
          default: DEFAULT_KAFKA_RETENTION_MS,
          description:
            "The topic's `retention.ms` in whole milliseconds (7 days by default); -1 keeps records forever.",
        },
        cleanupPolicy: {
          enum: [...KAFKA_CLEANUP_POLICIES],
          default: 'delete',
          description: "The topic's `cleanup.policy`.",
        },
        wireFormat: {
          enum: [...KAFKA_WIRE_FORMATS],
          description:
            "How producers write the event's record values: `json` (the envelope's JSON) or `confluent` (Confluent's wire format: magic byte 0, the registry's 4-byte schema id of the exact version, then the JSON; the producers then need `wireFormat: { schemaIds }`). Default: the catalog's `wireFormat` (evgen.config.json, or `\"evgen\": {\"wireFormat\": …}` in a catalog package's package.json), else `json`. Consumers read both on one topic.",
        },
      },
    },
    ordering: {
      enum: [...EVENT_ORDERINGS],
      default: 'relaxed',
      description:
        'How a Kafka consumer retries a failed record of this event: `relaxed` moves it to a retry topic (the partition goes on), `strict` retries it in place (the partition waits, nothing overtakes it).',
    },
    pulsar: {
      type: 'object',
      additionalProperties: false,
      required: ['topic'],
      description:
        'Publish the event on Pulsar, on `persistent://<tenant>/<namespace>/<topic>`. Without it the event is not on Pulsar. Events sharing a topic may each declare `partitions` once or with equal values; a conflict is a problem.',
      properties: {
        tenant: {
          type: 'string',
          pattern: PULSAR_NAME,
          maxLength: 255,
          default: DEFAULT_PULSAR_TENANT,
          description: 'The tenant; it must exist on the cluster (evgen never creates tenants).',
        },
        namespace: {
          type: 'string',
          pattern: PULSAR_NAME,
          maxLength: 255,
          default: DEFAULT_PULSAR_NAMESPACE,
          description: 'The namespace within the tenant.',
        },
        topic: {
          type: 'string',
          // "_" may lead so that "__…" is refused as reserved, with the reason, not as a typo.
          pattern: '^[A-Za-z0-9_][A-Za-z0-9._-]*$',
          maxLength: 255,
          description: 'The topic (before the deployment prefix).',
        },
        partitions: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_KAFKA_PARTITIONS,
          description:
            'Partitions of a partitioned topic; without it the topic is non-partitioned (one broker owns it; Key_Shared still spreads keys over consumers).',
        },
      },
    },
    rabbitmq: {
      type: 'object',
      additionalProperties: false,
      required: ['exchange', 'routingKey'],
      description: 'Publish the event on RabbitMQ. Without it the event is not on RabbitMQ.',
      properties: {
        exchange: {
          type: 'string',
          pattern: BROKER_NAME,
          maxLength: 255,
          description: 'The topic exchange (before the deployment prefix), usually one per domain.',
        },
        routingKey: {
          type: 'string',
          pattern: BROKER_NAME,
          maxLength: 255,
          description: 'The routing key consumers bind their queues with.',
        },
      },
    },
  },
} as const;

export const CONSUMER_JSON_KEYS = ['$schema', 'description', 'subscribes', 'inOrder'] as const;

export const consumerJsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  required: ['description', 'subscribes'],
  properties: {
    $schema: { type: 'string', description: 'A JSON Schema URL for editors; ignored by evgen.' },
    description: {
      type: 'string',
      minLength: 1,
      description: 'What the consumer does, in one sentence.',
    },
    subscribes: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', minLength: 1 },
      description:
        'The event types it handles (e.g. `order.OrderCreated`); all must share one transport (Kafka, RabbitMQ or Pulsar).',
    },
    inOrder: {
      enum: [...CONSUMER_IN_ORDER_MODES],
      description:
        'Declares how its handlers use `ctx.inOrder`, so the build can check it against what the consumer receives: `every-version` applies version N only after N-1, `allow-gaps` applies any newer version. Absent: not checked (the runtime default is `every-version`).',
    },
  },
} as const;
