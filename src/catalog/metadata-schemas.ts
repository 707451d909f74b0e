/**
 * JSON Schemas for evgen's own catalog files (`event.json`, `_consumers/<name>.json`). Validating
 * them with ajv gives precise JSON pointers; `additionalProperties: false` turns typos into errors.
 */
import {
  COMPATIBILITY_MODES,
  CONSUMER_IN_ORDER_MODES,
  COMPATIBILITY_POLICIES,
  EVENT_ORDERINGS,
  KAFKA_CLEANUP_POLICIES,
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
  'rabbitmq',
] as const;

/** Keys allowed under `kafka` in event.json. */
export const KAFKA_JSON_KEYS = ['topic', 'partitions', 'retentionMs', 'cleanupPolicy'] as const;

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
    $schema: { type: 'string' },
    description: { type: 'string', minLength: 1 },
    aggregate: { type: 'string', pattern: '^[A-Z][A-Za-z0-9]*$' },
    aggregateId: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
    compatibility: { enum: [...COMPATIBILITY_MODES] },
    policy: { enum: [...COMPATIBILITY_POLICIES] },
    eventType: {
      type: 'string',
      pattern: '^[A-Za-z][A-Za-z0-9_-]*(\\.[A-Za-z][A-Za-z0-9_-]*)*$',
      maxLength: 200,
    },
    kafka: {
      type: 'object',
      additionalProperties: false,
      required: ['topic'],
      properties: {
        topic: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', maxLength: 249 },
        partitions: { type: 'integer', minimum: 1, maximum: MAX_KAFKA_PARTITIONS },
        retentionMs: { type: 'integer', minimum: -1 },
        cleanupPolicy: { enum: [...KAFKA_CLEANUP_POLICIES] },
      },
    },
    ordering: { enum: [...EVENT_ORDERINGS] },
    rabbitmq: {
      type: 'object',
      additionalProperties: false,
      required: ['exchange', 'routingKey'],
      properties: {
        exchange: { type: 'string', pattern: BROKER_NAME, maxLength: 255 },
        routingKey: { type: 'string', pattern: BROKER_NAME, maxLength: 255 },
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
    $schema: { type: 'string' },
    description: { type: 'string', minLength: 1 },
    subscribes: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', minLength: 1 },
    },
    inOrder: { enum: [...CONSUMER_IN_ORDER_MODES] },
  },
} as const;
