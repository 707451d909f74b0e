/**
 * The connector-config generator and `evgen connect-config` (pure, no services): every header
 * column placed as its header, the catalog's topics created with the catalog's settings,
 * exactly-once only on request, deterministic bytes, bad options refused with exit 2 and nothing
 * written; and the CDC writer's refusals (before any SQL).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ValidationError,
  createEnvelope,
  writeCdcOutboxEvents,
  writeOutboxEvent,
  type Transaction,
} from 'evgen/runtime';
import { KAFKA_HEADERS, envelopeToKafkaRecord } from '../../src/runtime/kafka/kafka-record.js';
import { connectorConfig, connectorConfigFiles } from '../../src/cdc/connector-config.js';
import {
  CDC_OUTBOX_COLUMNS,
  CDC_OUTBOX_HEADER_COLUMNS,
  cdcOutboxRow,
} from '../../src/runtime/outbox/cdc-outbox.js';
import { runConnectConfig } from '../../src/cli/commands/connect-config.js';
import { orderCancelledV1Descriptor } from '../../generated/order/order-cancelled/envelope.js';
import { orderPlacedV1 } from '../outbox/support/test-event.js';

const base = {
  database: 'postgres',
  hostname: 'db.internal',
  port: 5432,
  dbname: 'shop',
  user: 'debezium',
} as const;
const topics = [
  { topic: 'order.events', partitions: 12, retentionMs: 86_400_000, cleanupPolicy: 'delete' },
  { topic: 'inventory.events', partitions: 3, retentionMs: -1, cleanupPolicy: 'compact' },
] as const;

describe('connector config', () => {
  it('places every header column as its header and routes by the topic column', () => {
    const config = connectorConfig(topics, base);
    const placement = config['transforms.outbox.table.fields.additional.placement']!.split(',');
    expect(placement).toEqual(
      CDC_OUTBOX_HEADER_COLUMNS.map((c) => `${c.column}:header:${c.header}`),
    );
    for (const header of Object.values(KAFKA_HEADERS)) {
      expect(placement.some((p) => p.endsWith(`:header:${header}`))).toBe(true);
    }
    expect(config).toMatchObject({
      'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
      'extended.headers.enabled': 'false',
      'transforms.outbox.route.by.field': 'topic',
      'transforms.outbox.route.topic.replacement': '${routedByValue}',
      'transforms.outbox.table.field.event.payload': 'envelope',
      'transforms.outbox.table.field.event.key': 'record_key',
      transforms: 'outbox,dropRouterId,dropNullHeaders',
      'database.password': '${env:EVGEN_CDC_DB_PASSWORD}',
      'table.include.list': 'public.outbox_cdc_event',
      'slot.name': 'evgen_outbox',
    });
    expect(config).not.toHaveProperty('exactly.once.support');
    expect(connectorConfig(topics, { ...base, exactlyOnce: true })['exactly.once.support']).toBe(
      'required',
    );
  });

  it('streams inserts only, handed to Connect every 10 ms (both databases)', () => {
    for (const database of ['postgres', 'mariadb'] as const) {
      const config = connectorConfig(topics, {
        ...base,
        database,
        kafkaBootstrapServers: 'kafka:9092',
      });
      // The writer deletes every row it inserts: the deletes must not reach the router.
      expect(config['skipped.operations']!.split(',').sort()).toEqual(['d', 't', 'u']);
      expect(config['poll.interval.ms']).toBe('10');
    }
  });

  it("creates the catalog's topics (prefixed) with their partitions, retention and cleanup policy", () => {
    const config = connectorConfig(topics, { ...base, topicPrefix: 'prod-', replicationFactor: 3 });
    expect(config['topic.creation.groups']).toBe('topic1,topic2');
    expect(config).toMatchObject({
      'topic.creation.topic1.include': '^prod\\-inventory\\.events$',
      'topic.creation.topic1.partitions': '3',
      'topic.creation.topic1.retention.ms': '-1',
      'topic.creation.topic1.cleanup.policy': 'compact',
      'topic.creation.topic1.replication.factor': '3',
      'topic.creation.topic2.include': '^prod\\-order\\.events$',
      'topic.creation.topic2.partitions': '12',
      'topic.creation.default.replication.factor': '3',
    });
  });

  it('MariaDB: the MariaDB connector on the binlog, the same router, a schema-history topic, a heartbeat', () => {
    const postgres = connectorConfig(topics, base);
    const mariadb = connectorConfig(topics, {
      ...base,
      database: 'mariadb',
      port: 3306,
      kafkaBootstrapServers: 'k1:9092,k2:9092',
    });
    expect(mariadb).toMatchObject({
      'connector.class': 'io.debezium.connector.mariadb.MariaDbConnector',
      'database.include.list': 'shop',
      'table.include.list': 'shop.outbox_cdc_event',
      'database.port': '3306',
      'schema.history.internal.kafka.bootstrap.servers': 'k1:9092,k2:9092',
      'schema.history.internal.kafka.topic': 'evgen-outbox.schema-history',
      'include.schema.changes': 'false',
      // A position to commit before any event (the first-offset-commit window).
      'heartbeat.interval.ms': '5000',
      'topic.creation.groups': 'topic1,topic2,heartbeat',
      'topic.creation.heartbeat.include': '^__debezium\\-heartbeat\\.evgen\\-outbox$',
      'topic.creation.heartbeat.partitions': '1',
      'topic.creation.heartbeat.cleanup.policy': 'compact',
    });
    expect(postgres).not.toHaveProperty('heartbeat.interval.ms');
    expect(Number(mariadb['database.server.id'])).toBeGreaterThanOrEqual(5400);
    expect(Number(mariadb['database.server.id'])).toBeLessThan(6400);
    for (const pgOnly of ['slot.name', 'publication.name', 'plugin.name', 'database.dbname']) {
      expect(mariadb).not.toHaveProperty(pgOnly);
    }
    // Router, converters, transforms and topic creation are the PostgreSQL connector's (plus
    // the heartbeat topic's group).
    for (const [key, value] of Object.entries(postgres)) {
      if (key === 'topic.creation.groups') continue;
      if (key.startsWith('transforms') || key.startsWith('topic.') || key.includes('converter')) {
        expect(mariadb[key]).toBe(value);
      }
    }
    expect(
      connectorConfig(topics, {
        ...base,
        database: 'mariadb',
        kafkaBootstrapServers: 'k:9092',
        serverId: 7001,
        schema: 'outbox_db',
      }),
    ).toMatchObject({
      'database.server.id': '7001',
      'table.include.list': 'outbox_db.outbox_cdc_event',
    });
    expect(() => connectorConfig(topics, { ...base, database: 'mariadb' })).toThrow(
      /kafkaBootstrapServers/,
    );
  });

  it('is deterministic: sorted keys, LF, one file per database', () => {
    const [file] = connectorConfigFiles([...topics].reverse(), { ...base, name: 'shop-outbox' });
    expect(file!.path).toBe('shop-outbox.json');
    expect(file!.content).toBe(
      connectorConfigFiles(topics, { ...base, name: 'shop-outbox' })[0]!.content,
    );
    const keys = Object.keys(JSON.parse(file!.content) as object);
    expect(keys).toEqual([...keys].sort());
    expect(file!.content.endsWith('}\n')).toBe(true);
  });
});

describe('evgen connect-config', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
    vi.restoreAllMocks();
  });

  it('writes the connector JSON for the example catalog', async () => {
    dir = mkdtempSync(join(tmpdir(), 'evgen-connect-config-'));
    vi.spyOn(process.stdout, 'write').mockReturnValue(true);
    const code = await runConnectConfig({
      output: join(dir, 'connect'),
      dbHost: 'db',
      dbPort: '5432',
      dbName: 'shop',
      dbUser: 'debezium',
      exactlyOnce: true,
    });
    expect(code).toBe(0);
    const config = JSON.parse(
      readFileSync(join(dir, 'connect', 'evgen-outbox.json'), 'utf8'),
    ) as Record<string, string>;
    expect(config['topic.creation.groups']).toBe('topic1,topic2');
    expect(config['topic.creation.topic2.include']).toBe('^order\\.events$');
    expect(config['exactly.once.support']).toBe('required');
  });

  it.each([
    ['postgres://debezium:s3cret@db.internal:6543/shop', {}, 'PostgresConnector', '6543'],
    ['postgresql://debezium@db.internal/shop', {}, 'PostgresConnector', '5432'],
    [
      'mariadb://debezium:s3cret@db.internal/shop',
      { kafkaBrokers: 'k:9092' },
      'MariaDbConnector',
      '3306',
    ],
    [
      'mysql://debezium@db.internal:3307/shop',
      { kafkaBrokers: 'k:9092', database: 'mariadb' },
      'MariaDbConnector',
      '3307',
    ],
  ])('takes the database from %s (no password written)', async (url, extra, connector, port) => {
    dir = mkdtempSync(join(tmpdir(), 'evgen-connect-config-'));
    vi.spyOn(process.stdout, 'write').mockReturnValue(true);
    expect(await runConnectConfig({ output: dir, databaseUrl: url, ...extra })).toBe(0);
    const text = readFileSync(join(dir, 'evgen-outbox.json'), 'utf8');
    expect(text).not.toContain('s3cret');
    expect(JSON.parse(text)).toMatchObject({
      'connector.class': expect.stringContaining(connector),
      'database.hostname': 'db.internal',
      'database.port': port,
      'database.user': 'debezium',
      'database.password': '${env:EVGEN_CDC_DB_PASSWORD}',
    });
  });

  it.each([
    [{ databaseUrl: 'mysql://u@db/shop', kafkaBrokers: 'k:9092' }, '--database mariadb'],
    [{ databaseUrl: 'mariadb://u@db/shop' }, '--kafka-brokers'],
    [{ databaseUrl: 'oracle://u@db/shop' }, '--database-url'],
    [{ databaseUrl: 'mariadb://u@db/shop', kafkaBrokers: 'k', serverId: '0' }, '--server-id'],
    [{ dbPort: '5432', dbName: 'shop', dbUser: 'u' }, '--db-host'],
    [{ dbHost: 'db', dbPort: 'x', dbName: 'shop', dbUser: 'u' }, '--db-port'],
    [{ dbHost: 'db', dbPort: '1', dbName: 'shop', dbUser: 'u', database: 'oracle' }, '--database'],
    [{ dbHost: 'db', dbPort: '1', dbName: 'shop', dbUser: 'u', slot: 'Bad-Slot' }, '--slot'],
  ])('refuses %j with exit 2 naming %s, writing nothing', async (options, flag) => {
    dir = mkdtempSync(join(tmpdir(), 'evgen-connect-config-'));
    const errors: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      errors.push(String(chunk));
      return true;
    });
    expect(await runConnectConfig({ ...options, output: join(dir, 'connect') })).toBe(2);
    expect(errors.join('')).toContain(flag);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('CDC outbox row', () => {
  const envelope = createEnvelope(
    orderCancelledV1Descriptor,
    {
      orderId: '0b1e8f3c-2a4d-4f6e-9a7b-5c3d2e1f0a9b',
      cancelledAt: '2026-03-01T10:00:00.000Z',
      reason: 'customer_request',
    },
    { aggregateVersion: 7, traceId: 't-1', correlationId: 'c-1', causationId: 'k-1' },
  );
  const extra = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };

  it("holds each header's value in the header's column, as the polling relay's record has it", () => {
    const row = cdcOutboxRow(envelope, 'order.events', 'prod-', extra);
    const relayRecord = envelopeToKafkaRecord(envelope, 'prod-order.events', extra);
    const columnValue = (name: string) => row[CDC_OUTBOX_COLUMNS.findIndex((c) => c.name === name)];
    expect(row).toHaveLength(CDC_OUTBOX_COLUMNS.length);
    for (const { header, column } of CDC_OUTBOX_HEADER_COLUMNS) {
      // Shared columns (ce_id = messageId, …) hold one value for all their headers.
      expect([header, columnValue(column)]).toEqual([
        header,
        relayRecord.headers?.[header] ?? null,
      ]);
    }
    expect(columnValue('topic')).toBe('prod-order.events');
    expect(columnValue('record_key')).toBe(relayRecord.key);
    expect(Buffer.from(columnValue('envelope')!, 'utf8')).toEqual(relayRecord.value);
  });

  it('has one column per distinct value: every column is routed or placed, none twice', () => {
    const names = CDC_OUTBOX_COLUMNS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    const placed = new Set(CDC_OUTBOX_HEADER_COLUMNS.map((c) => c.column));
    for (const name of names) {
      expect(placed.has(name) || name === 'topic' || name === 'envelope').toBe(true);
    }
    // Headers the relay always sets make their column NOT NULL; the others may be absent.
    const required = (name: string) => !CDC_OUTBOX_COLUMNS.find((c) => c.name === name)!.nullable;
    expect(['id', 'record_key', 'event_type', 'occurred_at', 'ce_source'].every(required)).toBe(
      true,
    );
    expect(['aggregate_version', 'trace_id', 'traceparent', 'tracestate'].some(required)).toBe(
      false,
    );
  });
});

describe('CDC writer refusals (before any SQL)', () => {
  const noSql = {
    query: () => {
      throw new Error('no SQL may run');
    },
  } as unknown as Transaction;
  const payload = {
    orderId: '0b1e8f3c-2a4d-4f6e-9a7b-5c3d2e1f0a9b',
    cancelledAt: '2026-03-01T10:00:00.000Z',
    reason: 'customer_request',
  } as const;

  it('a header without a column is refused, naming it', async () => {
    const attempt = writeOutboxEvent(
      noSql,
      orderCancelledV1Descriptor,
      payload,
      { headers: { 'x-tenant': 'a' } },
      { mode: 'cdc' },
    );
    await expect(attempt).rejects.toBeInstanceOf(ValidationError);
    await expect(attempt).rejects.toThrow('/headers/x-tenant');
  });

  it('a batch with one invalid payload is refused whole, before any SQL', async () => {
    const attempt = writeCdcOutboxEvents(noSql, [
      { descriptor: orderCancelledV1Descriptor, payload },
      { descriptor: orderCancelledV1Descriptor, payload: { ...payload, reason: 42 } },
    ]);
    await expect(attempt).rejects.toBeInstanceOf(ValidationError);
    await expect(attempt).rejects.toThrow('/reason');
    await expect(writeCdcOutboxEvents(noSql, [])).resolves.toEqual([]);
  });

  it('an event type without a Kafka topic is refused', async () => {
    await expect(
      writeOutboxEvent(noSql, orderPlacedV1, { orderId: 'o-1', amount: 1 }, {}, { mode: 'cdc' }),
    ).rejects.toThrow(/no.*kafka\.topic|Kafka topic/);
  });
});
