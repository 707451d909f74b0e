/**
 * The CDC outbox: a table shaped for Debezium's outbox EventRouter, so Kafka Connect (instead of
 * evgen's polling relay) streams each event from the database log to Kafka as the very record
 * the polling relay would send.
 *
 * One row per event, written by `writeOutboxEvent(..., { mode: 'cdc' })` in the business
 * transaction and deleted again in the same transaction by the table's AFTER INSERT trigger (one
 * round trip per event instead of two, and rows inserted by anything else go too): the log keeps
 * the insert (Debezium routes it), the delete is ignored by the router, and the table stays
 * empty, so there is nothing to claim, mark or prune. Every column is text holding the exact bytes that go on the wire:
 *
 *   id              the messageId (the router's event id, primary key)
 *   topic           the Kafka topic: the catalog's topic of the event type, with the deployment
 *                   prefix (the router's `route.by.field`)
 *   record_key      the record key: the aggregateId
 *   envelope        the record value: the envelope JSON exactly as the writer validated and built
 *                   it (text, not jsonb, which would reorder keys and respace it)
 *   one column per header (CDC_OUTBOX_HEADER_COLUMNS), each placed as that header by the
 *   generated connector config; a NULL column (an optional field the envelope does not have) is
 *   dropped by the DropNullHeaders transform, so it stays absent as with the polling relay.
 */
import type { Database, Transaction } from '../db/database.js';
import type { Envelope } from '../envelope.js';
import { KAFKA_HEADERS, kafkaEnvelopeHeaders } from '../kafka/kafka-record.js';
import { kafkaEventTopic } from '../kafka/topic-names.js';
import { TRACEPARENT_HEADER, TRACESTATE_HEADER } from '../telemetry.js';
import { aggregateVersionTableStatement } from './migration.js';
import { qualifiedName, quoteIdentifier } from '../db/sql-identifier.js';
import { outboxTableNames, type OutboxTableOptions } from './outbox-table.js';

/** Default table of the CDC outbox. */
export const DEFAULT_CDC_OUTBOX_TABLE = 'outbox_cdc_event';

/** The columns the EventRouter reads for id, routing, key and value. */
export const CDC_OUTBOX_ROUTING_COLUMNS = Object.freeze({
  id: 'id',
  topic: 'topic',
  key: 'record_key',
  value: 'envelope',
});

/** Headers a caller may add besides evgen's own: the W3C trace context. */
export const CDC_OUTBOX_EXTRA_HEADERS: readonly string[] = [TRACEPARENT_HEADER, TRACESTATE_HEADER];

/** Every header a CDC record can carry, and the column that holds it. */
export const CDC_OUTBOX_HEADER_COLUMNS: readonly {
  readonly header: string;
  readonly column: string;
}[] = Object.freeze(
  [
    [KAFKA_HEADERS.messageId, 'message_id'],
    [KAFKA_HEADERS.eventType, 'event_type'],
    [KAFKA_HEADERS.schemaVersion, 'schema_version'],
    [KAFKA_HEADERS.aggregateType, 'aggregate_type'],
    [KAFKA_HEADERS.aggregateId, 'aggregate_id'],
    [KAFKA_HEADERS.aggregateVersion, 'aggregate_version'],
    [KAFKA_HEADERS.occurredAt, 'occurred_at'],
    [KAFKA_HEADERS.traceId, 'trace_id'],
    [KAFKA_HEADERS.correlationId, 'correlation_id'],
    [KAFKA_HEADERS.causationId, 'causation_id'],
    [TRACEPARENT_HEADER, 'traceparent'],
    [TRACESTATE_HEADER, 'tracestate'],
    [KAFKA_HEADERS.contentType, 'content_type'],
    [KAFKA_HEADERS.ceSpecVersion, 'ce_specversion'],
    [KAFKA_HEADERS.ceId, 'ce_id'],
    [KAFKA_HEADERS.ceType, 'ce_type'],
    [KAFKA_HEADERS.ceSource, 'ce_source'],
    [KAFKA_HEADERS.ceSubject, 'ce_subject'],
    [KAFKA_HEADERS.ceTime, 'ce_time'],
  ].map(([header, column]) => Object.freeze({ header: header!, column: column! })),
);

/** Headers that are set on every record (the others only when the envelope has the field). */
const REQUIRED_HEADERS = new Set<string>(
  Object.keys(
    kafkaEnvelopeHeaders({
      messageId: '',
      eventType: '',
      schemaVersion: 0,
      aggregateType: '',
      aggregateId: '',
      occurredAt: '',
      payload: null,
    }),
  ),
);

/** Table names of the CDC outbox: `outbox_cdc_event` unless another table is given. */
export function cdcOutboxTableOptions(options: OutboxTableOptions = {}): OutboxTableOptions {
  return { ...options, table: options.table ?? DEFAULT_CDC_OUTBOX_TABLE };
}

/** The CDC outbox schema as idempotent statements (one statement each). */
export function cdcOutboxMigrationStatements(options: OutboxTableOptions = {}): string[] {
  const n = outboxTableNames(cdcOutboxTableOptions(options));
  const r = CDC_OUTBOX_ROUTING_COLUMNS;
  const columns = [
    `${r.id} TEXT PRIMARY KEY`,
    `${r.topic} TEXT NOT NULL`,
    `${r.key} TEXT NOT NULL`,
    `${r.value} TEXT NOT NULL`,
    ...CDC_OUTBOX_HEADER_COLUMNS.map(
      ({ header, column }) =>
        `${column} TEXT ${REQUIRED_HEADERS.has(header) ? 'NOT NULL' : 'NULL'}`,
    ),
  ];
  const table = options.table ?? DEFAULT_CDC_OUTBOX_TABLE;
  const deleteFunction = qualifiedName(options.schema, `${table}_delete_inserted`);
  const deleteTrigger = quoteIdentifier(`${table}_delete_inserted`);
  return [
    ...(n.schema !== undefined ? [`CREATE SCHEMA IF NOT EXISTS ${n.schema}`] : []),
    `CREATE TABLE IF NOT EXISTS ${n.table} (\n  ${columns.join(',\n  ')}\n)`,
    // Deletes what a statement inserted, in its transaction: the log keeps the inserts.
    `CREATE OR REPLACE FUNCTION ${deleteFunction}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM ${n.table} AS t USING inserted WHERE t.${r.id} = inserted.${r.id};
  RETURN NULL;
END
$$`,
    `DROP TRIGGER IF EXISTS ${deleteTrigger} ON ${n.table}`,
    `CREATE TRIGGER ${deleteTrigger} AFTER INSERT ON ${n.table}
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION ${deleteFunction}()`,
    aggregateVersionTableStatement(n.versionTable),
  ];
}

/** The CDC outbox migration as one SQL script. */
export function cdcOutboxMigrationSql(options: OutboxTableOptions = {}): string {
  return cdcOutboxMigrationStatements(options)
    .map((statement) => `${statement};\n`)
    .join('\n');
}

/** Creates the CDC outbox tables if missing (one transaction, under an advisory lock). */
export async function migrateCdcOutbox(
  db: Database,
  options: OutboxTableOptions = {},
): Promise<void> {
  const statements = cdcOutboxMigrationStatements(options);
  const key = outboxTableNames(cdcOutboxTableOptions(options)).key;
  await db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`evgen:migrate:${key}`]);
    for (const statement of statements) await tx.query(statement);
  });
}

/** The header columns' values for a record: the relay's headers, NULL where a header is absent. */
export function cdcOutboxHeaderValues(
  envelope: Envelope,
  extraHeaders: Readonly<Record<string, string>>,
): (string | null)[] {
  const headers: Record<string, string> = { ...extraHeaders, ...kafkaEnvelopeHeaders(envelope) };
  return CDC_OUTBOX_HEADER_COLUMNS.map(({ header }) =>
    Object.prototype.hasOwnProperty.call(headers, header) ? headers[header]! : null,
  );
}

/**
 * Inserts the event's row within `tx` (the table's trigger deletes it again in the same
 * transaction): the database log carries the insert to Debezium when `tx` commits, and nothing
 * when it rolls back.
 */
export async function insertCdcOutboxRow(
  tx: Transaction,
  table: string,
  envelope: Envelope,
  topic: string,
  topicPrefix: string | undefined,
  extraHeaders: Readonly<Record<string, string>>,
): Promise<void> {
  const r = CDC_OUTBOX_ROUTING_COLUMNS;
  const columns = [
    r.id,
    r.topic,
    r.key,
    r.value,
    ...CDC_OUTBOX_HEADER_COLUMNS.map((c) => c.column),
  ];
  const values = [
    envelope.messageId,
    kafkaEventTopic(topic, topicPrefix),
    envelope.aggregateId,
    JSON.stringify(envelope),
    ...cdcOutboxHeaderValues(envelope, extraHeaders),
  ];
  await tx.query(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
    values,
  );
}
