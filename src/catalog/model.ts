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
  readonly kafka: { readonly topic: string };
  readonly rabbitmq: { readonly exchange: string; readonly routingKey: string };
  /** Folder of the event relative to the catalog root (`order/OrderCreated`). */
  readonly dir: string;
  /** Sorted by version, ascending. */
  readonly versions: readonly EventVersion[];
}

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
}

export interface Catalog {
  /** Absolute path of the folder the catalog was read from. */
  readonly root: string;
  /** Sorted by domain, then name. */
  readonly events: readonly EventDefinition[];
  /** Sorted by name. */
  readonly consumers: readonly ConsumerDefinition[];
}
