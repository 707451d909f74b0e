/**
 * A version newer than the generated consumer knows, over every transport (RabbitMQ and both Kafka
 * adapters on the real brokers, and the in-process broker): the generated descriptors carry the
 * catalog's compatibility mode, so `inventory-service` reads order.OrderCancelled v2 with its v1
 * reader when the catalog says FULL_TRANSITIVE (the example catalog as committed), and dead-letters
 * it at once, saying why, when the same catalog says BACKWARD (generated into a scratch folder).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  migrateInbox,
  postgresDatabase,
  type Envelope,
  type InboxConsumer,
  type Transaction,
} from 'evgen/runtime';
import { createInventoryServiceConsumer } from '../../generated/consumers/inventory-service.js';
import { orderCancelledV1 } from '../../generated/order/order-cancelled/envelope.js';
import { generateExample, type GeneratedExample } from '../support/generated-example.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import { TRANSPORTS, type TransportUnderTest } from './support/transports.js';

type ConsumerFactory = typeof createInventoryServiceConsumer;

let backward: GeneratedExample;
let createBackwardConsumer: ConsumerFactory;

beforeAll(async () => {
  backward = await generateExample(
    import.meta.url,
    ['types', 'validators', 'envelopes', 'consumers'],
    (catalog) => ({
      ...catalog,
      events: catalog.events.map((event) =>
        event.eventType === 'order.OrderCancelled'
          ? { ...event, compatibility: 'BACKWARD' as const }
          : event,
      ),
    }),
  );
  createBackwardConsumer = (
    await backward.load<{ createInventoryServiceConsumer: ConsumerFactory }>(
      'consumers/inventory-service.ts',
    )
  ).createInventoryServiceConsumer;
}, 120_000);
afterAll(() => backward?.remove());

async function waitFor(what: string, condition: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`${what}: not reached within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(TRANSPORTS)('generated consumer, newer version: $name', (entry) => {
  let transport: TransportUnderTest | undefined;
  let pg: TestSchema | undefined;

  afterEach(async () => {
    await transport?.cleanup();
    transport = undefined;
    await pg?.drop();
    pg = undefined;
  });

  /** Starts the generated consumer from `create` on a fresh transport; returns helpers. */
  async function start(create: ConsumerFactory) {
    pg = await createTestSchema('evgen_newer_version');
    const schema = pg.schema;
    const db = postgresDatabase(pg.pool);
    await migrateInbox(db, { schema });
    await pg.pool.query(
      `CREATE TABLE "${schema}".released (message_id text NOT NULL, schema_version int NOT NULL, order_id text NOT NULL)`,
    );
    const release = async (envelope: Envelope, tx: Transaction) => {
      await tx.query(
        `INSERT INTO "${schema}".released (message_id, schema_version, order_id) VALUES ($1, $2, $3)`,
        [
          envelope.messageId,
          envelope.schemaVersion,
          (envelope.payload as { orderId: string }).orderId,
        ],
      );
    };
    const consumer: InboxConsumer = create({
      db,
      inbox: { schema },
      handlers: {
        'order.OrderCancelled': { 1: (envelope, ctx) => release(envelope, ctx.tx) },
        'order.OrderCreated': { 2: async () => undefined },
      },
    });
    transport = entry.create();
    await transport.start(consumer, 3);
    const t = transport;
    const rows = async (messageId: string) =>
      (
        await pg!.pool.query<{ schema_version: number; order_id: string }>(
          `SELECT schema_version, order_id FROM "${schema}".released WHERE message_id = $1`,
          [messageId],
        )
      ).rows;
    const send = (envelope: Envelope) =>
      t.send({
        body: JSON.stringify(envelope),
        messageId: envelope.messageId,
        eventType: envelope.eventType,
        key: envelope.aggregateId,
      });
    return { t, rows, send };
  }

  const cancelledPayload = () => ({
    orderId: randomUUID(),
    cancelledAt: new Date().toISOString(),
    reason: 'customer_request' as const,
  });

  /** order.OrderCancelled as a v2 producer would write it: a property v1 does not declare. */
  function newerCancelled(): Envelope {
    const v1 = orderCancelledV1(cancelledPayload());
    return { ...v1, schemaVersion: 2, payload: { ...v1.payload, refundId: 'r-1' } };
  }

  it('FULL_TRANSITIVE (the committed catalog): v2 is read with the v1 reader and handled once, no dead letter', async () => {
    const { t, rows, send } = await start(createInventoryServiceConsumer);
    const newer = newerCancelled();
    await send(newer);
    await waitFor('newer handled', async () => (await rows(newer.messageId)).length > 0);
    // The handler sees the version it knows; the property it does not declare is not an error.
    expect(await rows(newer.messageId)).toEqual([
      { schema_version: 1, order_id: (newer.payload as { orderId: string }).orderId },
    ]);
    // Sent again (a redelivery): the inbox absorbs it.
    await send(newer);
    await waitFor('duplicate seen', async () => t.metrics().duplicates === 1);
    expect(await rows(newer.messageId)).toHaveLength(1);
    expect(t.metrics()).toMatchObject({ handled: 2, duplicates: 1, retried: 0, deadLettered: 0 });
    expect(await t.deadLetters()).toEqual([]);
  });

  it('BACKWARD (same catalog, mode changed): v2 is dead-lettered at once with the reason, and v1 behind it is handled', async () => {
    const { t, rows, send } = await start(createBackwardConsumer);
    const newer = newerCancelled();
    const v1 = orderCancelledV1(cancelledPayload());
    await send(newer);
    await send(v1);
    await waitFor('v1 handled', async () => (await rows(v1.messageId)).length === 1);
    await waitFor('dead letter', async () =>
      (await t.deadLetters()).some((letter) => letter.messageId === newer.messageId),
    );
    const [letter] = (await t.deadLetters()).filter((l) => l.messageId === newer.messageId);
    expect(letter).toMatchObject({
      errorType: 'UnknownEventError',
      attempts: 1,
      consumer: 'inventory-service',
    });
    expect(letter!.errorMessage).toContain('compatibility mode BACKWARD does not promise');
    expect(await rows(newer.messageId)).toEqual([]);
    expect(t.metrics()).toMatchObject({ retried: 0, deadLettered: 1 });
  });
});
