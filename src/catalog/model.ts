/**
 * The in-memory event catalog: what `events/` says, validated. Every generator target and the
 * compatibility checker read this model, never the files.
 */

export const COMPATIBILITY_MODES = [
  'BACKWARD',
  'BACKWARD_TRANSITIVE',
  'FORWARD',
  'FORWARD_TRANSITIVE',
  'FULL',
  'FULL_TRANSITIVE',
  'NONE',
] as const;
export type CompatibilityMode = (typeof COMPATIBILITY_MODES)[number];

/**
 * How a consumer treats a failed event. `relaxed` (the default): the record moves to a retry
 * topic and the partition goes on. `strict`: the partition waits and retries the record in place
 * (pause with backoff), so later events of the partition are never handled before it.
 */
export const EVENT_ORDERINGS = ['relaxed', 'strict'] as const;
export type EventOrdering = (typeof EVENT_ORDERINGS)[number];

/** Kafka `cleanup.policy` values a topic may declare. */
export const KAFKA_CLEANUP_POLICIES = ['delete', 'compact', 'compact,delete'] as const;
export type KafkaCleanupPolicy = (typeof KAFKA_CLEANUP_POLICIES)[number];

/**
 * How an event's records are written on Kafka. `json`: the value is the envelope's JSON.
 * `confluent`: Confluent's wire format (magic byte 0, the 4-byte schema id the registry gave the
 * exact version, then the JSON), which Confluent's and Apicurio's serdes read. Chosen per catalog
 * (config `wireFormat`, a catalog package's `"evgen": {"wireFormat": …}`) and per event
 * (`kafka.wireFormat` in event.json, which wins); consumers read both on one topic either way.
 */
export const KAFKA_WIRE_FORMATS = ['json', 'confluent'] as const;
export type KafkaWireFormat = (typeof KAFKA_WIRE_FORMATS)[number];

/** Partitions of a topic no event declares any for. */
export const DEFAULT_KAFKA_PARTITIONS = 6;
/** `retention.ms` of a topic no event declares one for: 7 days. */
export const DEFAULT_KAFKA_RETENTION_MS = 604_800_000;

/** Where an event is published on Kafka, with the topic settings its event.json declares. */
export interface KafkaEventTopic {
  readonly topic: string;
  /** Partitions of the topic; absent = not declared here (defaults apply per topic). */
  readonly partitions?: number;
  /** `retention.ms`; -1 keeps records forever. Absent = not declared here. */
  readonly retentionMs?: number;
  readonly cleanupPolicy?: KafkaCleanupPolicy;
  /**
   * `confluent` when the event's records are framed (event.json's `kafka.wireFormat`, else its
   * catalog's default); absent = `json`, the plain envelope.
   */
  readonly wireFormat?: 'confluent';
}

/** Tenant of a Pulsar topic no event names one for (the broker's default tenant). */
export const DEFAULT_PULSAR_TENANT = 'public';
/** Namespace of a Pulsar topic no event names one for (the broker's default namespace). */
export const DEFAULT_PULSAR_NAMESPACE = 'default';

/**
 * Where an event is published on Pulsar: `persistent://<tenant>/<namespace>/<topic>`, with the
 * topic settings its event.json declares.
 */
export interface PulsarEventTopic {
  /** Absent = `public`. */
  readonly tenant?: string;
  /** Absent = `default`. */
  readonly namespace?: string;
  readonly topic: string;
  /** Partitions of a partitioned topic; absent = not declared here (a non-partitioned topic). */
  readonly partitions?: number;
}

/** Where an event is published on RabbitMQ. */
export interface RabbitEventRoute {
  readonly exchange: string;
  readonly routingKey: string;
}

/** The broker transports an event.json can declare a block for. */
export type BrokerTransport = 'kafka' | 'rabbitmq' | 'pulsar';

export const COMPATIBILITY_POLICIES = ['evgen', 'confluent', 'confluent-lenient'] as const;
export type CompatibilityPolicy = (typeof COMPATIBILITY_POLICIES)[number];

/** A JSON Schema document (draft-07 or 2020-12), as parsed JSON. */
export type JsonSchema = boolean | { readonly [keyword: string]: unknown };

export interface EventVersion {
  /** 1, 2, … without gaps. */
  readonly version: number;
  /** Path of the schema file relative to the catalog root, with `/` separators. */
  readonly file: string;
  /** The schema exactly as written in the file. */
  readonly schema: JsonSchema;
  /**
   * The same schema made self-contained: references to other files under `events/` are
   * inlined into `$defs`/`definitions`, so consumers never touch the file system.
   */
  readonly bundled: JsonSchema;
}

export interface EventDefinition {
  /** `order` in `events/order/OrderCreated`. */
  readonly domain: string;
  /** `OrderCreated` in `events/order/OrderCreated`. */
  readonly name: string;
  /** Defaults to `<domain>.<name>`. */
  readonly eventType: string;
  readonly description: string;
  /** The aggregate kind, e.g. `Order`. */
  readonly aggregate: string;
  /** Name of a required string property present in every version's payload. */
  readonly aggregateId: string;
  readonly compatibility: CompatibilityMode;
  readonly policy: CompatibilityPolicy;
  /** Absent: the event is not published on Kafka (a RabbitMQ-only or in-process event). */
  readonly kafka?: KafkaEventTopic;
  /** Absent means `relaxed`. */
  readonly ordering?: EventOrdering;
  /** Absent: the event is not published on RabbitMQ (a Kafka-only or in-process event). */
  readonly rabbitmq?: RabbitEventRoute;
  /** Absent: the event is not published on Pulsar. */
  readonly pulsar?: PulsarEventTopic;
  /** Folder of the event relative to the catalog root (`order/OrderCreated`). */
  readonly dir: string;
  /** Sorted by version, ascending. */
  readonly versions: readonly EventVersion[];
  /**
   * Absent: the repository's own event, which it produces. Present: an event of a catalog this
   * repository depends on (`catalogs` in the config): it reads it and never writes it, so no
   * outbox writer or publish helper is generated for it.
   */
  readonly dependency?: EventDependency;
}

/** Where an event read from another repository's catalog comes from. */
export interface EventDependency {
  /** The name the config gives the catalog (`orders`). */
  readonly name: string;
  /** Absolute events folder of that catalog. */
  readonly root: string;
}

/**
 * How a consumer's handlers use `ctx.inOrder`, declared so that the build can check it against
 * the consumer's subscriptions. `every-version`: each version of an aggregate is applied right
 * after the one before, a missing one waits (needs every version to arrive). `allow-gaps`: any
 * newer version applies and older ones are skipped as stale (the generated consumer sets the
 * runtime's `ordering.allowGaps`).
 */
export const CONSUMER_IN_ORDER_MODES = ['every-version', 'allow-gaps'] as const;
export type ConsumerInOrderMode = (typeof CONSUMER_IN_ORDER_MODES)[number];

/**
 * A service that consumes events, declared in `events/_consumers/<name>.json`. Inbox dispatch,
 * handler stubs and broker queues are generated per consumer.
 */
export interface ConsumerDefinition {
  /** kebab-case, e.g. `inventory-service`; also the inbox's consumer key and the queue name stem. */
  readonly name: string;
  readonly description: string;
  /** Path of the declaring file relative to the catalog root. */
  readonly file: string;
  /** Event types it handles (`order.OrderCreated`), sorted. */
  readonly subscribes: readonly string[];
  /** How its handlers use `ctx.inOrder`; absent = not declared (nothing is checked). */
  readonly inOrder?: ConsumerInOrderMode;
}

export interface Catalog {
  /** Absolute path of the folder the catalog was read from. */
  readonly root: string;
  /** Sorted by domain, then name. */
  readonly events: readonly EventDefinition[];
  /** Sorted by name. */
  readonly consumers: readonly ConsumerDefinition[];
}
