/**
 * A minimal hand-written outbox poller: the least database work any outbox relay does, as a
 * bench baseline for evgen's relay. One batch is one transaction — SELECT the oldest READY rows
 * … FOR UPDATE SKIP LOCKED, send them in one awaited producer send (acks = all), UPDATE them to
 * SENT, COMMIT. No per-aggregate order check, lease, retry, outage or poison bookkeeping.
 */
import type { Pool as PgPool } from 'pg';
import type { Pool as MysqlPool, RowDataPacket } from 'mysql2/promise';
import type { Envelope } from '../../src/runtime/envelope.js';
import type { KafkaProducer } from '../../src/runtime/kafka/kafka-client.js';
import { envelopeToKafkaRecord } from '../../src/runtime/kafka/kafka-record.js';

/** Publishes up to `limit` READY rows; resolves with how many it sent. */
export type PollerBatch = (limit: number) => Promise<number>;

interface PolledRow {
  readonly id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly schema_version: number;
  readonly aggregate_type: string;
  readonly aggregate_id: string;
  readonly occurred_at: string;
  readonly payload: unknown;
}

const COLUMNS =
  'id, event_id, event_type, schema_version, aggregate_type, aggregate_id, occurred_at, payload';

function envelopeOf(row: PolledRow): Envelope {
  return {
    messageId: row.event_id,
    eventType: row.event_type,
    schemaVersion: Number(row.schema_version),
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    occurredAt: row.occurred_at,
    payload: row.payload,
  };
}

/** The poller on PostgreSQL, over `"schema".outbox_event`. */
export function postgresPollerBatch(
  pool: PgPool,
  schema: string,
  producer: KafkaProducer,
  topic: string,
): PollerBatch {
  return async (limit) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<PolledRow>(
        `SELECT id::text AS id, event_id::text AS event_id, event_type, schema_version, aggregate_type,
                aggregate_id, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at, payload
           FROM "${schema}".outbox_event WHERE status = 'READY' ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      if (rows.length > 0) {
        await producer.send(rows.map((row) => envelopeToKafkaRecord(envelopeOf(row), topic)));
        await client.query(
          `UPDATE "${schema}".outbox_event SET status = 'SENT', sent_at = now() WHERE id = ANY($1::bigint[])`,
          [rows.map((row) => row.id)],
        );
      }
      await client.query('COMMIT');
      return rows.length;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
}

/** The poller on MariaDB/MySQL, over `outbox_event` in the pool's database. */
export function mariadbPollerBatch(
  pool: MysqlPool,
  producer: KafkaProducer,
  topic: string,
): PollerBatch {
  return async (limit) => {
    const connection = await pool.getConnection();
    try {
      await connection.beginTransaction();
      const [found] = await connection.query<RowDataPacket[]>(
        `SELECT ${COLUMNS} FROM outbox_event WHERE status = 'READY' ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      const rows = found.map((row): PolledRow => ({
        ...(row as PolledRow),
        id: String(row.id),
        // DATETIME(3) in UTC, read as a string (dateStrings), and JSON as LONGTEXT on MariaDB.
        occurred_at: `${String(row.occurred_at).replace(' ', 'T')}Z`,
        payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
      }));
      if (rows.length > 0) {
        await producer.send(rows.map((row) => envelopeToKafkaRecord(envelopeOf(row), topic)));
        await connection.query(
          `UPDATE outbox_event SET status = 'SENT', sent_at = UTC_TIMESTAMP(3) WHERE id IN (?)`,
          [rows.map((row) => row.id)],
        );
      }
      await connection.commit();
      return rows.length;
    } catch (error) {
      await connection.rollback().catch(() => undefined);
      throw error;
    } finally {
      connection.release();
    }
  };
}
