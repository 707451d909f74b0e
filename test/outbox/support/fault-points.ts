/**
 * Shared by the outbox fault-injection test and its child process (outbox side):
 * the kill points, the event the service writes, the test tables, and a publisher that records
 * every confirmed publish in the database, so publishes by a process that was later killed stay
 * visible to the test. Imports the runtime by path: the child runs outside vitest's aliases.
 */
import { Ajv } from 'ajv';
import {
  payloadValidator,
  qualifiedName,
  type Database,
  type Envelope,
  type EventVersionDescriptor,
  type OutboundMessage,
  type Publisher,
  type Queryable,
} from '../../../src/runtime/index.js';

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

/** The test's own tables next to the outbox: the business rows, the "broker", the consumer's effects. */
export function faultTables(schemaName: string) {
  return {
    invoices: qualifiedName(schemaName, 'invoices'),
    published: qualifiedName(schemaName, 'published'),
    effects: qualifiedName(schemaName, 'effects'),
  };
}

export async function createFaultTables(db: Database, schemaName: string): Promise<void> {
  const t = faultTables(schemaName);
  await db.query(
    `CREATE TABLE ${t.invoices} (invoice_id text PRIMARY KEY, amount integer NOT NULL)`,
  );
  await db.query(
    `CREATE TABLE ${t.published} (seq serial PRIMARY KEY, message_id text NOT NULL, outbox_id bigint NOT NULL,
       publisher text NOT NULL, envelope jsonb NOT NULL)`,
  );
  await db.query(
    `CREATE TABLE ${t.effects} (seq serial PRIMARY KEY, message_id text NOT NULL, invoice_id text NOT NULL)`,
  );
}

/** The business write that must commit or vanish together with the outbox row. */
export async function insertInvoice(
  q: Queryable,
  schemaName: string,
  payload: InvoiceIssuedV1Payload,
): Promise<void> {
  await q.query(
    `INSERT INTO ${faultTables(schemaName).invoices} (invoice_id, amount) VALUES ($1, $2)`,
    [payload.invoiceId, payload.amount],
  );
}

/**
 * A publisher standing in for the broker: publish() resolves (the "confirm") only once the
 * message is committed to the `published` table, in its own statement outside any relay work.
 */
export function databasePublisher(db: Database, schemaName: string, name: string): Publisher {
  const table = faultTables(schemaName).published;
  return {
    async publish(message: OutboundMessage) {
      await db.query(
        `INSERT INTO ${table} (message_id, outbox_id, publisher, envelope) VALUES ($1, $2, $3, $4::jsonb)`,
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
  const result = await db.query<PublishedRecord>(
    `SELECT message_id, publisher, envelope FROM ${faultTables(schemaName).published} ORDER BY seq`,
  );
  return result.rows;
}
