/**
 * Shared by the outbox fault-injection test and its child process (outbox side):
 * the kill points, the event the service writes, the test tables, and a publisher that records
 * every confirmed publish in the database, so publishes by a process that was later killed stay
 * visible to the test. Imports the runtime by path: the child runs outside vitest's aliases.
 */
import { Ajv } from 'ajv';
import {
  payloadValidator,
  type Database,
  type Envelope,
  type EventVersionDescriptor,
  type OutboundMessage,
  type Publisher,
} from '../../../src/runtime/index.js';
import { dialectOf } from '../../../src/runtime/db/sql-dialect.js';
import { type Queryable } from '../../../src/runtime/db/database.js';

/** Where the service process is SIGKILLed, in the order a write travels through the outbox. */
export const FAULT_POINTS = [
  'after-business-write',
  'after-outbox-write',
  'after-commit',
  'after-confirm',
  'after-sent',
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

/** The line the child prints when it has reached `point` and waits to be killed. */
export const reachedMarker = (point: FaultPoint) => `reached ${point}`;

export interface InvoiceIssuedV1Payload {
  invoiceId: string;
  amount: number;
}

const schema = {
  type: 'object',
  required: ['invoiceId', 'amount'],
  properties: {
    invoiceId: { type: 'string', minLength: 1 },
    amount: { type: 'integer', minimum: 0 },
  },
};
const ajv = new Ajv({ allErrors: true, strict: true });

export const invoiceIssuedV1: EventVersionDescriptor<
  'test.InvoiceIssued',
  1,
  InvoiceIssuedV1Payload
> = {
  eventType: 'test.InvoiceIssued',
  schemaVersion: 1,
  aggregateType: 'Invoice',
  aggregateIdProperty: 'invoiceId',
  validatePayload: payloadValidator<InvoiceIssuedV1Payload>(
    ajv.compile({ ...schema, additionalProperties: false }),
  ),
  readPayload: payloadValidator<InvoiceIssuedV1Payload>(ajv.compile(schema)),
};

/**
 * The test's own tables next to the outbox: the business rows, the "broker", the consumer's
 * effects, quoted for the connection's dialect (PostgreSQL or MySQL/MariaDB).
 */
export function faultTables(q: Queryable, schemaName: string) {
  const { qualifiedName } = dialectOf(q);
  return {
    invoices: qualifiedName(schemaName, 'invoices'),
    published: qualifiedName(schemaName, 'published'),
    effects: qualifiedName(schemaName, 'effects'),
  };
}

/** `$n` placeholders as the connection's dialect writes them (`?` on MySQL, each used once, in order). */
export function params(q: Queryable, text: string): string {
  const { param } = dialectOf(q);
  return text.replace(/\$(\d+)/g, (_, n: string) => param(Number(n)));
}

export async function createFaultTables(db: Database, schemaName: string): Promise<void> {
  const t = faultTables(db, schemaName);
  const mysql = dialectOf(db).name === 'mysql';
  const key = mysql ? 'VARCHAR(255)' : 'text';
  const seq = mysql ? 'BIGINT AUTO_INCREMENT' : 'serial';
  await db.query(
    `CREATE TABLE ${t.invoices} (invoice_id ${key} PRIMARY KEY, amount integer NOT NULL)`,
  );
  await db.query(
    `CREATE TABLE ${t.published} (seq ${seq} PRIMARY KEY, message_id ${key} NOT NULL, outbox_id bigint NOT NULL,
       publisher ${key} NOT NULL, envelope ${mysql ? 'JSON' : 'jsonb'} NOT NULL)`,
  );
  await db.query(
    `CREATE TABLE ${t.effects} (seq ${seq} PRIMARY KEY, message_id ${key} NOT NULL, invoice_id ${key} NOT NULL)`,
  );
}

/** The business write that must commit or vanish together with the outbox row. */
export async function insertInvoice(
  q: Queryable,
  schemaName: string,
  payload: InvoiceIssuedV1Payload,
): Promise<void> {
  await q.query(
    params(
      q,
      `INSERT INTO ${faultTables(q, schemaName).invoices} (invoice_id, amount) VALUES ($1, $2)`,
    ),
    [payload.invoiceId, payload.amount],
  );
}

/**
 * A publisher standing in for the broker: publish() resolves (the "confirm") only once the
 * message is committed to the `published` table, in its own statement outside any relay work.
 */
export function databasePublisher(db: Database, schemaName: string, name: string): Publisher {
  const table = faultTables(db, schemaName).published;
  const json = dialectOf(db).name === 'mysql' ? '$4' : '$4::jsonb';
  return {
    async publish(message: OutboundMessage) {
      await db.query(
        params(
          db,
          `INSERT INTO ${table} (message_id, outbox_id, publisher, envelope) VALUES ($1, $2, $3, ${json})`,
        ),
        [message.envelope.messageId, message.outboxId, name, JSON.stringify(message.envelope)],
      );
    },
  };
}

export interface PublishedRecord {
  message_id: string;
  publisher: string;
  envelope: Envelope;
}

/** Everything the "broker" received, in publish order. */
export async function publishedRecords(
  db: Queryable,
  schemaName: string,
): Promise<PublishedRecord[]> {
  const result = await db.query<Omit<PublishedRecord, 'envelope'> & { envelope: unknown }>(
    `SELECT message_id, publisher, envelope FROM ${faultTables(db, schemaName).published} ORDER BY seq`,
  );
  // MariaDB's JSON is LONGTEXT: the driver hands it back as the text written.
  return result.rows.map((row) => ({
    ...row,
    envelope: (typeof row.envelope === 'string'
      ? JSON.parse(row.envelope)
      : row.envelope) as Envelope,
  }));
}
