/**
 * Kafka Connect configuration for Debezium streaming evgen's CDC outbox (`outbox_cdc_event`, see
 * the runtime's cdc-outbox.ts) to the catalog's Kafka topics, as records identical to the polling
 * relay's. One connector per database: the row names its topic (the writer puts the catalog's
 * topic of the event type there), so a single EventRouter routes every event type.
 *
 * Two sources, the same router and transforms:
 * - `postgres`: Debezium's PostgresConnector on a `pgoutput` replication slot and a publication of
 *   the one table (the server needs `wal_level = logical`).
 * - `mariadb`: Debezium's MariaDbConnector reading the binlog (ROW format, full row images) as a
 *   replica with its own `database.server.id`. It keeps the table's DDL in a schema-history topic
 *   on the Kafka cluster (`<name>.schema-history`), so it needs the brokers' addresses.
 *
 * What each part is for:
 * - StringConverter for key and value: the key is the aggregateId and the value the envelope text
 *   byte for byte (JsonConverter would double-encode the text or, expanding it, drop nulls).
 * - `table.fields.additional.placement`: every header column as its header; the router's own
 *   `id` header is dropped (DropHeaders) and NULL columns are removed (evgen's DropNullHeaders),
 *   so an optional header the envelope lacks stays absent.
 * - `extended.headers.enabled=false`: no `__debezium.context.*` headers.
 * - `topic.creation.*`: a broker with auto-create off still gets the catalog's topics, with the
 *   catalog's partitions, retention and cleanup policy.
 * - `exactly.once.support=required` (option `exactlyOnce`): the worker must run with
 *   `exactly.once.source.support=enabled`; a killed worker then publishes no duplicates (consumers
 *   read with isolation read_committed). Without it, a worker crash re-sends what it had not
 *   committed offsets for, and the inbox absorbs the duplicates.
 *
 * Pure: returns the files; the CLI writes them.
 */
import {
  CDC_OUTBOX_HEADER_COLUMNS,
  CDC_OUTBOX_ROUTING_COLUMNS,
  DEFAULT_CDC_OUTBOX_TABLE,
} from '../runtime/outbox/cdc-outbox.js';
import { cdcSlotName } from '../runtime/outbox/cdc-server-readiness.js';
import { kafkaEventTopic } from '../runtime/kafka/topic-names.js';
import { DEFAULT_KAFKA_PARTITIONS, type KafkaCleanupPolicy } from '../catalog/model.js';

/** Databases Debezium streams the CDC outbox from. */
export const CONNECTOR_DATABASES = ['postgres', 'mariadb'] as const;
export type ConnectorDatabase = (typeof CONNECTOR_DATABASES)[number];

/** A catalog topic as the connector creates it. */
export interface ConnectorTopic {
  readonly topic: string;
  readonly partitions: number;
  readonly retentionMs: number;
  readonly cleanupPolicy: KafkaCleanupPolicy;
}

export interface ConnectorConfigOptions {
  readonly database: ConnectorDatabase;
  /** Connector name; also Debezium's `topic.prefix` (its metrics names). Default `evgen-outbox`. */
  readonly name?: string;
  readonly hostname: string;
  readonly port: number;
  readonly dbname: string;
  readonly user: string;
  /**
   * The password as the worker should resolve it. Default `${env:EVGEN_CDC_DB_PASSWORD}` (the worker
   * needs `config.providers=env`), so no secret is written into the file.
   */
  readonly password?: string;
  /**
   * Schema of the CDC outbox table: PostgreSQL default `public`; MariaDB: the database holding
   * it (default `dbname`).
   */
  readonly schema?: string;
  readonly table?: string;
  /** Deployment prefix of the topic names (the writer's `topicPrefix`). */
  readonly topicPrefix?: string;
  /**
   * PostgreSQL: replication slot and publication name (default: the connector name with `_` for
   * `-`, `evgen_outbox` for the default connector). The CDC outbox refuses writes until this slot
   * and publication exist: give `migrateCdcOutbox` the same `slot`.
   */
  readonly slotName?: string;
  /** MariaDB: `host:port,…` of the Kafka brokers holding the schema-history topic (required). */
  readonly kafkaBootstrapServers?: string;
  /**
   * MariaDB: the replica server id the connector reads the binlog as, unique among the server's
   * replicas (default: 5400–6399, derived from the connector name, so the output is stable).
   */
  readonly serverId?: number;
  /** Replication factor of topics the connector creates (default 1; use 3 in production). */
  readonly replicationFactor?: number;
  readonly exactlyOnce?: boolean;
}

export interface ConnectorConfigFile {
  /** `<name>.json` */
  readonly path: string;
  readonly content: string;
}

export const DEFAULT_CONNECTOR_NAME = 'evgen-outbox';
export const DEFAULT_PASSWORD_REFERENCE = '${env:EVGEN_CDC_DB_PASSWORD}';

const STRING_CONVERTER = 'org.apache.kafka.connect.storage.StringConverter';

/** How often a MariaDB connector sends a heartbeat (Debezium's `heartbeat.interval.ms`). */
export const MARIADB_HEARTBEAT_INTERVAL_MS = 5_000;

/** The topic Debezium sends a connector's heartbeats to (default `topic.heartbeat.prefix`). */
export function heartbeatTopic(name: string): string {
  return `__debezium-heartbeat.${name}`;
}

/** Java regex matching exactly `text`. */
function exactRegex(text: string): string {
  return `^${text.replace(/[.\\^$|?*+()[\]{}-]/g, (c) => `\\${c}`)}$`;
}

/** The default replica server id of a MariaDB connector: stable per name, in 5400–6399. */
export function defaultServerId(name: string): number {
  let hash = 0;
  for (const char of name) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return 5400 + (hash % 1000);
}

/** What differs per database: the connector class and how it reaches and follows the log. */
function sourceConfig(options: ConnectorConfigOptions, name: string): Record<string, string> {
  const table = options.table ?? DEFAULT_CDC_OUTBOX_TABLE;
  const common = {
    'database.hostname': options.hostname,
    'database.port': String(options.port),
    'database.user': options.user,
    'database.password': options.password ?? DEFAULT_PASSWORD_REFERENCE,
  };
  if (options.database === 'mariadb') {
    const database = options.schema ?? options.dbname;
    if (options.kafkaBootstrapServers === undefined || options.kafkaBootstrapServers === '') {
      throw new TypeError(
        'a MariaDB connector needs kafkaBootstrapServers: Debezium keeps the table schema in a Kafka topic',
      );
    }
    return {
      ...common,
      'connector.class': 'io.debezium.connector.mariadb.MariaDbConnector',
      'database.server.id': String(options.serverId ?? defaultServerId(name)),
      'database.include.list': database,
      'table.include.list': `${database}.${table}`,
      // The binlog carries rows, not their column names: Debezium replays the table's DDL from
      // this topic after a restart. Only the outbox table's DDL is kept.
      'schema.history.internal.kafka.bootstrap.servers': options.kafkaBootstrapServers,
      'schema.history.internal.kafka.topic': `${name}.schema-history`,
      'schema.history.internal.store.only.captured.tables.ddl': 'true',
      'include.schema.changes': 'false',
      // MariaDB keeps no read position for a binlog reader: until Connect has committed this
      // connector's first source offset, a worker crash restarts it at the binlog's end and what
      // was written since its first start is skipped. A heartbeat record carries the position,
      // so the first commit comes one heartbeat and one offset flush after the start, with no
      // event written (the new CDC outbox refuses writes until it is confirmed: evgen outbox
      // cdc-confirm). The router passes heartbeat records through to their own topic.
      'heartbeat.interval.ms': String(MARIADB_HEARTBEAT_INTERVAL_MS),
    };
  }
  const schema = options.schema ?? 'public';
  // The CDC outbox's writers wait for this slot and publication: migrate it with the same name.
  const slot = options.slotName ?? cdcSlotName(name);
  return {
    ...common,
    'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
    'plugin.name': 'pgoutput',
    'database.dbname': options.dbname,
    'table.include.list': `${schema}.${table}`,
    'slot.name': slot,
    'publication.name': slot,
    'publication.autocreate.mode': 'filtered',
  };
}

/** The flat key → value map Kafka Connect takes at `PUT /connectors/<name>/config`. */
export function connectorConfig(
  topics: readonly ConnectorTopic[],
  options: ConnectorConfigOptions,
): Record<string, string> {
  const name = options.name ?? DEFAULT_CONNECTOR_NAME;
  const replicationFactor = String(options.replicationFactor ?? 1);
  const r = CDC_OUTBOX_ROUTING_COLUMNS;
  const sorted = [...topics].sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  const groups = sorted.map((topic, index) => ({ group: `topic${index + 1}`, topic }));
  const config: Record<string, string> = {
    ...sourceConfig(options, name),
    'tasks.max': '1',
    'topic.prefix': name,
    // The table is always empty: rows written before the connector started are gone already.
    'snapshot.mode': 'no_data',
    'tombstones.on.delete': 'false',
    // Every row is deleted again in its transaction, so the log holds a delete per event; the
    // router would drop it, but only after Debezium built a change record for it and Connect
    // queued and transformed it. Skipping deletes (and updates, which the router only warns
    // about, and truncates) at the source halves the events Debezium handles: the worker's CPU
    // per event measured 116–154 ms per 1,000 events with it, 162–230 without (loaded machine).
    'skipped.operations': 'u,d,t',
    // How long Debezium's task waits for more change events before handing a batch to Connect
    // (default 500 ms): unless max.batch.size (2,048) events are queued it waits the whole
    // interval, so this is the bulk of the commit → consumer latency. Measured with 200 events/s
    // offered: 50 ms gave p50 57 ms, 10 ms gave p50 19–21 ms, at no measurable CPU cost (an idle
    // task wakes 100 times a second). With exactly-once each batch is one Kafka transaction.
    'poll.interval.ms': '10',
    'extended.headers.enabled': 'false',
    'key.converter': STRING_CONVERTER,
    'value.converter': STRING_CONVERTER,
    'header.converter': 'org.apache.kafka.connect.storage.SimpleHeaderConverter',
    transforms: 'outbox,dropRouterId,dropNullHeaders',
    'transforms.outbox.type': 'io.debezium.transforms.outbox.EventRouter',
    'transforms.outbox.table.field.event.id': r.id,
    'transforms.outbox.table.field.event.key': r.key,
    'transforms.outbox.table.field.event.payload': r.value,
    'transforms.outbox.route.by.field': r.topic,
    'transforms.outbox.route.topic.replacement': '${routedByValue}',
    'transforms.outbox.table.fields.additional.placement': CDC_OUTBOX_HEADER_COLUMNS.map(
      ({ header, column }) => `${column}:header:${header}`,
    ).join(','),
    'transforms.dropRouterId.type': 'org.apache.kafka.connect.transforms.DropHeaders',
    'transforms.dropRouterId.headers': 'id',
    'transforms.dropNullHeaders.type': 'dev.evgen.connect.DropNullHeaders',
    // Only topics outside the catalog fall back to these (the writer routes to catalog topics only).
    'topic.creation.default.partitions': String(DEFAULT_KAFKA_PARTITIONS),
    'topic.creation.default.replication.factor': replicationFactor,
    ...(groups.length > 0 || options.database === 'mariadb'
      ? {
          'topic.creation.groups': [
            ...groups.map((g) => g.group),
            ...(options.database === 'mariadb' ? ['heartbeat'] : []),
          ].join(','),
        }
      : {}),
    ...(options.exactlyOnce ? { 'exactly.once.support': 'required' } : {}),
  };
  for (const { group, topic } of groups) {
    const prefix = `topic.creation.${group}`;
    config[`${prefix}.include`] = exactRegex(kafkaEventTopic(topic.topic, options.topicPrefix));
    config[`${prefix}.partitions`] = String(topic.partitions);
    config[`${prefix}.replication.factor`] = replicationFactor;
    config[`${prefix}.retention.ms`] = String(topic.retentionMs);
    config[`${prefix}.cleanup.policy`] = topic.cleanupPolicy;
  }
  if (options.database === 'mariadb') {
    // One record key (the connector), and only the latest heartbeat matters.
    config['topic.creation.heartbeat.include'] = exactRegex(heartbeatTopic(name));
    config['topic.creation.heartbeat.partitions'] = '1';
    config['topic.creation.heartbeat.replication.factor'] = replicationFactor;
    config['topic.creation.heartbeat.cleanup.policy'] = 'compact';
  }
  return Object.fromEntries(
    Object.entries(config).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

/** The connector's config as a file: `<name>.json`, sorted keys, two-space indent, LF. */
export function connectorConfigFiles(
  topics: readonly ConnectorTopic[],
  options: ConnectorConfigOptions,
): ConnectorConfigFile[] {
  const name = options.name ?? DEFAULT_CONNECTOR_NAME;
  return [
    {
      path: `${name}.json`,
      content: `${JSON.stringify(connectorConfig(topics, options), null, 2)}\n`,
    },
  ];
}
