/**
 * Writes one event into the outbox inside the caller's transaction, so the event commits or
 * rolls back together with the business rows.
 */
import type { Transaction } from '../db/database.js';
import { notifyLocally } from '../db/local-notify.js';
import { dialectOf } from '../db/sql-dialect.js';
import { quoteIdentifier } from '../db/sql-identifier.js';
import { mysqlTimestamp } from '../db/sql-timestamp.js';
import {
  createEnvelope,
  type Envelope,
  type EnvelopeMeta,
  type EventVersionDescriptor,
} from '../envelope.js';
import { ValidationError } from '../errors.js';
import { withActiveTraceContext } from '../telemetry.js';
import { envelopeBodySize, transportLimitViolations, type BodySize } from '../transport-limits.js';
import {
  CDC_OUTBOX_EXTRA_HEADERS,
  CDC_OUTBOX_VALUE_INDEX,
  cdcOutboxRow,
  cdcOutboxTableOptions,
  insertCdcOutboxRows,
  type CdcOutboxRow,
} from './cdc-outbox.js';
import {
  DEFAULT_OUTBOX_NOTIFY_CHANNEL,
  outboxTableNames,
  type OutboxTableNames,
  type OutboxTableOptions,
} from './outbox-table.js';
import { requestEventContext } from '../idempotency/request-event-ids.js';

/**
 * What the caller may add to an event: the envelope fields of `EnvelopeMeta` (a fixed `messageId`
 * makes a retried request write the same event; `occurredAt` is stored and republished at
 * millisecond precision; `aggregateVersion` excludes `assignAggregateVersion`), plus transport headers.
 */
export interface OutboxWriteContext extends EnvelopeMeta {
  /** Extra transport headers stored with the row and handed to the publisher. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface OutboxWriteOptions extends OutboxTableOptions {
  /**
   * Assign the next aggregate version from the `<table>_aggregate_version` counter. The counter
   * row stays locked until the transaction ends, so concurrent writers of one aggregate get
   * consecutive versions and commit in version order.
   */
  readonly assignAggregateVersion?: boolean;
  /**
   * Channel to NOTIFY on commit (wakes relays); `false` sends none. Default `evgen_outbox`. On
   * MySQL/MariaDB (no NOTIFY) it wakes the relays of this process after the commit of a
   * transaction run by evgen's `Database.transaction()`; other relays find the row by polling.
   */
  readonly notifyChannel?: string | false;
  /**
   * `relay` (default): a row of the outbox the polling relay publishes. `cdc`: a row of the CDC
   * outbox (default table `outbox_cdc_event`) that Debezium's outbox EventRouter streams to the
   * event's Kafka topic, inserted and deleted within `tx` (see cdc-outbox.ts), on PostgreSQL
   * (logical decoding) or MySQL/MariaDB (row binlog). No NOTIFY is sent. `writeCdcOutboxEvents`
   * writes many in one statement.
   */
  readonly mode?: 'relay' | 'cdc';
  /** CDC mode: prepended to the catalog's Kafka topic, as the polling relay's `prefix`. */
  readonly topicPrefix?: string;
}

/**
 * Transaction-local setting that remembers the channel this transaction already notified, so a
 * transaction writing many events calls pg_notify once (the first write), not once per row. It is
 * a server-side setting, not client state, so it is right however the caller manages transactions:
 * it ends with the transaction, and a rolled-back savepoint undoes it together with its NOTIFY.
 */
const NOTIFIED_SETTING = 'evgen.outbox_notified';

function invalid(subject: string, pointer: string, message: string): ValidationError {
  return new ValidationError(subject, [{ pointer, keyword: 'format', message }]);
}

/** One event of a `writeCdcOutboxEvents` batch. */
export interface CdcOutboxEventToWrite<
  TType extends string = string,
  TVersion extends number = number,
  TPayload = unknown,
> {
  readonly descriptor: EventVersionDescriptor<TType, TVersion, TPayload>;
  readonly payload: TPayload;
  readonly context?: OutboxWriteContext;
}

/**
 * Validates `payload` with the descriptor's strict validator, builds the envelope and inserts
 * it into the outbox within `tx`. Returns the envelope exactly as the relay will publish it.
 * An invalid payload throws a ValidationError listing every violation and writes nothing.
 */
export async function writeOutboxEvent<TType extends string, TVersion extends number, TPayload>(
  tx: Transaction,
  descriptor: EventVersionDescriptor<TType, TVersion, TPayload>,
  payload: TPayload,
  context: OutboxWriteContext = {},
  options: OutboxWriteOptions = {},
): Promise<Envelope<TType, TVersion, TPayload>> {
  if (options.mode === 'cdc') {
    const [envelope] = await writeCdcOutboxEvents(tx, [{ descriptor, payload, context }], options);
    return envelope as Envelope<TType, TVersion, TPayload>;
  }
  const dialect = dialectOf(tx);
  const names = outboxTableNames(options, dialect);
  const notifyChannel = options.notifyChannel ?? DEFAULT_OUTBOX_NOTIFY_CHANNEL;
  if (notifyChannel !== false) quoteIdentifier(notifyChannel);
  // Inside an idempotent request: the key header and a messageId derived from key and position.
  const prepared = prepareEnvelope(
    descriptor,
    payload,
    requestEventContext(tx, context),
    options,
    false,
  );
  const { headers } = prepared;
  let { envelope } = prepared;
  const payloadJson = JSON.stringify(envelope.payload);
  refuseUnpublishable(descriptor, envelope, headers, envelopeBodySize(envelope, payloadJson));
  if (options.assignAggregateVersion) envelope = await assignVersion(tx, names, envelope);
  if (dialect.name === 'mysql')
    return writeMysqlRow(tx, names, envelope, payloadJson, notifyChannel, headers);

  await tx.query(
    `WITH inserted AS (
       INSERT INTO ${names.table} (${OUTBOX_ROW_COLUMNS})
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12::jsonb)
       RETURNING id
     ), notified AS MATERIALIZED (
       SELECT pg_notify($13::text, ''), set_config('${NOTIFIED_SETTING}', $13::text, true)
       WHERE $13::text IS NOT NULL AND current_setting('${NOTIFIED_SETTING}', true) IS DISTINCT FROM $13::text
     )
     SELECT id, (SELECT count(*) FROM notified) AS notified FROM inserted`,
    [
      ...outboxRowValues(
        envelope,
        payloadJson,
        envelope.occurredAt,
        await withActiveTraceContext(headers),
      ),
      notifyChannel === false ? null : notifyChannel,
    ],
  );
  return envelope;
}

/**
 * CDC mode for several events at once: every payload is validated and every envelope built first
 * (an invalid one throws and nothing is written), then the rows go into the CDC outbox in one
 * INSERT of per-column arrays (PostgreSQL, whose trigger deletes them in the same statement) or
 * one multi-row INSERT and one DELETE (MySQL/MariaDB), whatever their number, instead of one
 * round trip per event.
 * Returns the envelopes in the given order, as Debezium will publish them. Options as for
 * `writeOutboxEvent` in mode `cdc` (the mode is implied); with `assignAggregateVersion` each
 * event still costs a round trip to its aggregate's counter.
 */
export async function writeCdcOutboxEvents(
  tx: Transaction,
  events: readonly CdcOutboxEventToWrite[],
  options: Omit<OutboxWriteOptions, 'mode'> = {},
): Promise<Envelope[]> {
  const dialect = dialectOf(tx);
  const names = outboxTableNames(cdcOutboxTableOptions(options), dialect);
  const prepared = events.map(({ descriptor, payload, context = {} }) =>
    prepareEnvelope(descriptor, payload, requestEventContext(tx, context, false), options, true),
  );
  const envelopes: Envelope[] = [];
  const rows: CdcOutboxRow[] = [];
  for (const [i, { envelope: built, headers }] of prepared.entries()) {
    const envelope = options.assignAggregateVersion ? await assignVersion(tx, names, built) : built;
    // The writer's trace context: CDC has no evgen publish step to start a span of its own.
    const traceContext = await withActiveTraceContext(headers);
    const extra = Object.fromEntries(
      CDC_OUTBOX_EXTRA_HEADERS.filter((name) => traceContext[name] !== undefined).map((name) => [
        name,
        traceContext[name]!,
      ]),
    );
    const { descriptor } = events[i]!;
    const row = cdcOutboxRow(envelope, descriptor.kafka!.topic, options.topicPrefix, extra);
    const value = row[CDC_OUTBOX_VALUE_INDEX]!;
    refuseUnpublishable(descriptor, envelope, extra, {
      atMost: value.length * 3,
      exact: () => Buffer.byteLength(value, 'utf8'),
    });
    envelopes.push(envelope);
    rows.push(row);
  }
  await insertCdcOutboxRows(tx, names, rows);
  return envelopes;
}

/**
 * Checks the caller's context and headers (CDC: only the headers it has columns for, and a Kafka
 * topic) and builds the envelope: the payload and envelope fields are validated before any SQL
 * runs. occurredAt goes in as a Date so the stored timestamp and the returned envelope agree to
 * the millisecond; an unparseable one fails createEnvelope's check.
 */
function prepareEnvelope<TType extends string, TVersion extends number, TPayload>(
  descriptor: EventVersionDescriptor<TType, TVersion, TPayload>,
  payload: TPayload,
  context: OutboxWriteContext,
  options: Omit<OutboxWriteOptions, 'mode'>,
  cdc: boolean,
): { envelope: Envelope<TType, TVersion, TPayload>; headers: Readonly<Record<string, string>> } {
  const subject = `${descriptor.eventType} v${descriptor.schemaVersion} envelope`;
  if (context.aggregateVersion !== undefined && options.assignAggregateVersion) {
    throw new TypeError(
      'pass either context.aggregateVersion or options.assignAggregateVersion, not both',
    );
  }
  const { headers = {}, ...meta } = context;
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== 'string') throw invalid(subject, `/headers/${name}`, 'must be a string');
    if (cdc && !CDC_OUTBOX_EXTRA_HEADERS.includes(name)) {
      throw invalid(
        subject,
        `/headers/${name}`,
        `the CDC outbox has a column for each header it publishes; besides evgen's own it carries only ${CDC_OUTBOX_EXTRA_HEADERS.join(' and ')}`,
      );
    }
  }
  if (cdc && descriptor.kafka === undefined) {
    throw invalid(
      subject,
      '/eventType',
      `the CDC outbox publishes to the event's Kafka topic, and the catalog gives ${descriptor.eventType} none (add kafka.topic to its event.json)`,
    );
  }
  const envelope = createEnvelope(descriptor, payload, {
    ...meta,
    occurredAt: meta.occurredAt === undefined ? new Date() : new Date(meta.occurredAt),
  });
  return { envelope, headers };
}

/**
 * Refuses an event a transport it is published on could not carry (a property, header name,
 * header table or record over the broker's limit, see transport-limits.ts): it would otherwise
 * commit and then never be published. CDC events go to Kafka only.
 */
function refuseUnpublishable(
  descriptor: EventVersionDescriptor,
  envelope: Envelope,
  headers: Readonly<Record<string, string>>,
  body: BodySize,
): void {
  if (descriptor.rabbitmq === undefined && descriptor.kafka === undefined) return;
  const violations = transportLimitViolations(envelope, headers, descriptor, body);
  if (violations.length > 0)
    throw new ValidationError(
      `${descriptor.eventType} v${descriptor.schemaVersion} envelope`,
      violations,
    );
}

/**
 * The aggregate's next version from the `<table>_aggregate_version` counter. The counter row
 * stays locked until the transaction ends. PostgreSQL: one upsert returning the version;
 * MySQL/MariaDB: ON DUPLICATE KEY UPDATE, then a read of the row it locked.
 */
async function assignVersion<E extends Envelope>(
  tx: Transaction,
  names: OutboxTableNames,
  envelope: E,
): Promise<E> {
  const key = [envelope.aggregateType, envelope.aggregateId];
  if (dialectOf(tx).name === 'mysql') {
    await tx.query(
      `INSERT INTO ${names.versionTable} (aggregate_type, aggregate_id, version) VALUES (?, ?, 1)
       ON DUPLICATE KEY UPDATE version = version + 1`,
      key,
    );
    const counter = await tx.query<{ version: string }>(
      `SELECT CAST(version AS CHAR) AS version FROM ${names.versionTable} WHERE aggregate_type = ? AND aggregate_id = ?`,
      key,
    );
    return { ...envelope, aggregateVersion: Number(counter.rows[0]?.version) };
  }
  const counter = await tx.query<{ version: string }>(
    `INSERT INTO ${names.versionTable} AS v (aggregate_type, aggregate_id, version) VALUES ($1, $2, 1)
     ON CONFLICT (aggregate_type, aggregate_id) DO UPDATE SET version = v.version + 1
     RETURNING version::text AS version`,
    key,
  );
  return { ...envelope, aggregateVersion: Number(counter.rows[0]?.version) };
}

/** The outbox columns an envelope fills, in the order of {@link outboxRowValues}. */
const OUTBOX_ROW_COLUMNS =
  'event_id, aggregate_type, aggregate_id, aggregate_version, event_type, schema_version, payload, occurred_at, trace_id, correlation_id, causation_id, headers';

/**
 * The values of {@link OUTBOX_ROW_COLUMNS} for `envelope`, one list for every dialect: only how
 * `occurredAt` is written differs (ISO-8601 for PostgreSQL, a UTC DATETIME literal for MySQL),
 * so the caller renders it. Payload and headers are the JSON text the writer validated.
 */
function outboxRowValues(
  envelope: Envelope,
  payloadJson: string,
  occurredAt: string,
  headers: Readonly<Record<string, string>>,
): unknown[] {
  return [
    envelope.messageId,
    envelope.aggregateType,
    envelope.aggregateId,
    envelope.aggregateVersion ?? null,
    envelope.eventType,
    envelope.schemaVersion,
    payloadJson,
    occurredAt,
    envelope.traceId ?? null,
    envelope.correlationId ?? null,
    envelope.causationId ?? null,
    JSON.stringify(headers),
  ];
}

/** Channels each open MySQL transaction will wake after its commit. */
const wakesAfterCommit = new WeakMap<Transaction, Set<string>>();

/**
 * MySQL/MariaDB: the row inserted with UTC timestamps; relays of this process woken after the
 * commit. The payload is stored as the text that was validated.
 */
async function writeMysqlRow<TType extends string, TVersion extends number, TPayload>(
  tx: Transaction,
  names: OutboxTableNames,
  envelope: Envelope<TType, TVersion, TPayload>,
  payloadJson: string,
  notifyChannel: string | false,
  headers: Readonly<Record<string, string>>,
): Promise<Envelope<TType, TVersion, TPayload>> {
  await tx.query(
    `INSERT INTO ${names.table} (${OUTBOX_ROW_COLUMNS}, status, attempts, available_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'READY', 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`,
    outboxRowValues(
      envelope,
      payloadJson,
      mysqlTimestamp(envelope.occurredAt),
      await withActiveTraceContext(headers),
    ),
  );
  if (notifyChannel !== false && tx.afterCommit !== undefined) {
    // Once per transaction and channel however many rows it writes. Without a commit hook (the
    // caller's own transaction) relays poll instead: a wake-up before the commit finds nothing.
    const notified = wakesAfterCommit.get(tx) ?? new Set<string>();
    wakesAfterCommit.set(tx, notified);
    if (!notified.has(notifyChannel)) {
      notified.add(notifyChannel);
      tx.afterCommit(() => notifyLocally(notifyChannel));
    }
  }
  return envelope;
}
