/**
 * One hostile message, then 50 good ones, over every transport (the in-process broker, RabbitMQ,
 * Kafka with kafkajs and with @platformatic/kafka, Pulsar, on the real brokers): the hostile one ends in
 * exactly one dead letter, the runner never starts over because of it, and every good one is
 * handled exactly once. Hostile here means what a foreign producer can send and evgen cannot copy
 * as it is: a body messageId of 300 characters with no messageId beside the body (it cannot be an
 * AMQP messageId property, a shortstr of at most 255 bytes), and a 100 KB producer header on a
 * message whose handler keeps failing (its retry copies and its dead letter carry it).
 */
import { acceptAnyDescriptor } from '../support/accept-any-descriptor.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createEnvelope,
  createInboxConsumer,
  migrateInbox,
  postgresDatabase,
  RetryableError,
  type Envelope,
  type Transaction,
} from 'evgen/runtime';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { CONSUMER, TRANSPORTS, type TransportUnderTest } from './support/transports.js';

interface Payload {
  readonly orderId: string;
  readonly failing?: boolean;
}

const CANCELLED = acceptAnyDescriptor<Payload>('order.OrderCancelled', { compatibility: 'FULL' });
const MAX_ATTEMPTS = 3;
const GOOD_BEHIND = 50;

async function waitFor(what: string, condition: () => Promise<boolean> | boolean): Promise<void> {
  const until = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`${what}: not reached within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(TRANSPORTS)('a hostile message among good ones: $name', (entry) => {
  let transport: TransportUnderTest;
  let pg: TestSchema;

  beforeAll(async () => {
    pg = await createTestSchema('evgen_poison');
    const db = postgresDatabase(pg.pool);
    await migrateInbox(db, { schema: pg.schema });
    await pg.pool.query(
      `CREATE TABLE "${pg.schema}".effects (id serial PRIMARY KEY, message_id text NOT NULL)`,
    );
    const consumer = createInboxConsumer(
      { name: CONSUMER, descriptors: [CANCELLED] },
      {
        db,
        inbox: { schema: pg.schema },
        handlers: {
          'order.OrderCancelled': {
            1: async (envelope: Envelope<string, 1, Payload>, ctx: { tx: Transaction }) => {
              if (envelope.payload.failing) throw new RetryableError('stock service busy');
              await ctx.tx.query(`INSERT INTO "${pg.schema}".effects (message_id) VALUES ($1)`, [
                envelope.messageId,
              ]);
            },
          },
        },
      },
    );
    transport = entry.create();
    await transport.start(consumer, MAX_ATTEMPTS);
  }, 120_000);

  afterAll(async () => {
    await transport?.cleanup();
    await pg?.drop();
  });

  async function effectCounts(): Promise<Map<string, number>> {
    const { rows } = await pg.pool.query<{ message_id: string; n: string }>(
      `SELECT message_id, count(*) AS n FROM "${pg.schema}".effects GROUP BY message_id`,
    );
    return new Map(rows.map((row) => [row.message_id, Number(row.n)]));
  }

  /** Sends the hostile message, then 50 good ones; asserts the outcome described above. */
  async function hostileThenGood(hostile: {
    body: string;
    messageId: string | null;
    headers?: Record<string, string>;
    key: string;
  }): Promise<void> {
    const before = transport.metrics();
    const restartsBefore = transport.restarts();
    const lettersBefore = (await transport.deadLetters()).length;
    await transport.send({ ...hostile, eventType: CANCELLED.eventType });
    const good = Array.from({ length: GOOD_BEHIND }, (_, i) =>
      createEnvelope(CANCELLED, { orderId: `${hostile.key}-${i % 5}` }),
    );
    for (const envelope of good)
      await transport.send({
        body: JSON.stringify(envelope),
        messageId: envelope.messageId,
        eventType: envelope.eventType,
        key: envelope.aggregateId,
      });
    await waitFor(
      'one dead letter and every good message handled',
      async () =>
        transport.metrics().deadLettered - before.deadLettered >= 1 &&
        transport.metrics().handled - before.handled >= GOOD_BEHIND,
    );
    await waitFor(
      'the dead letter readable',
      async () => (await transport.deadLetters()).length > lettersBefore,
    );
    // Time for a redelivery or a second dead letter to show, had the runner started over.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const counts = await effectCounts();
    expect(good.map((envelope) => counts.get(envelope.messageId) ?? 0)).toEqual(good.map(() => 1));
    expect(transport.restarts() - restartsBefore).toBe(0);
    expect(transport.metrics().deadLettered - before.deadLettered).toBe(1);
    expect(transport.metrics().handled - before.handled).toBe(GOOD_BEHIND);
    expect((await transport.deadLetters()).length - lettersBefore).toBe(1);
  }

  it('a body messageId of 300 characters and none beside the body: one dead letter, 50 handled once', async () => {
    const envelope = createEnvelope(CANCELLED, { orderId: 'long-id' });
    await hostileThenGood({
      body: JSON.stringify({ ...envelope, messageId: 'm'.repeat(300) }),
      messageId: null,
      key: envelope.aggregateId,
    });
  }, 120_000);

  it('a 100 KB producer header on a message that keeps failing: one dead letter, 50 handled once', async () => {
    const envelope = createEnvelope(CANCELLED, { orderId: 'big-header', failing: true });
    await hostileThenGood({
      body: JSON.stringify(envelope),
      messageId: envelope.messageId,
      headers: { 'x-producer-blob': 'b'.repeat(100 * 1024) },
      key: envelope.aggregateId,
    });
  }, 120_000);

  it('a header as large as the transport carries, on a message that keeps failing: its copies still fit, one dead letter, 50 handled once', async () => {
    const envelope = createEnvelope(CANCELLED, { orderId: 'huge-header', failing: true });
    await hostileThenGood({
      body: JSON.stringify(envelope),
      messageId: envelope.messageId,
      headers: { 'x-producer-blob': 'b'.repeat(transport.largestHeaderBytes) },
      key: envelope.aggregateId,
    });
  }, 120_000);
});
