/**
 * evgen on PostgreSQL sessions configured away from the defaults, as real servers and roles are
 * (`ALTER ROLE … SET`, `ALTER DATABASE … SET`, postgresql.conf): dates printed the SQL way
 * day-first, a time zone that is not UTC, SQL-standard intervals, SERIALIZABLE by default, short
 * float output, escaped bytea and non-standard string literals. Set here per connection (the
 * shared server is never reconfigured). The writer, relay, inbox, handler and idempotency store
 * run as on a default server, and times stay the instants written.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InProcessBroker,
  createOutboxRelay,
  listDeadOutboxEvents,
  migrateIdempotency,
  migrateInbox,
  migrateOutbox,
  outboxStats,
  postgresDatabase,
  runIdempotent,
  type Database,
  type OutboxRelay,
} from 'evgen-runtime';
import {
  createInventoryServiceConsumer,
  type InventoryServiceHandlers,
} from '../../generated/consumers/inventory-service.js';
import { writeOrderCreatedV2 } from '../../generated/order/order-created/outbox.js';
import type { OrderCreatedV2Payload } from '../../generated/order/order-created/types.js';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../support/postgres.js';

const SETTINGS = {
  DateStyle: 'SQL, DMY',
  TimeZone: 'Asia/Kolkata',
  IntervalStyle: 'sql_standard',
  default_transaction_isolation: 'serializable',
  extra_float_digits: '0',
  bytea_output: 'escape',
  standard_conforming_strings: 'off',
};

describe('PostgreSQL sessions with settings away from the defaults', { timeout: 60_000 }, () => {
  let test: TestSchema;
  let pool: pg.Pool;
  let db: Database;

  beforeEach(async () => {
    test = await createTestSchema('evgen_pgsettings');
    const options = Object.entries(SETTINGS)
      .map(([name, value]) => `-c ${name}=${value.replaceAll(' ', '\\ ')}`)
      .join(' ');
    pool = new pg.Pool({
      connectionString: TEST_DATABASE_URL,
      max: 6,
      options: `-c search_path=${test.schema} ${options}`,
    });
    pool.on('error', () => undefined);
    db = postgresDatabase(pool);
  });
  afterEach(async () => {
    await pool.end();
    await test.drop();
  });

  it('runs as on a default server: the settings hold, an event is delivered once, a key replayed', async () => {
    const { rows: shown } = await db.query<{ datestyle: string; timezone: string }>(
      'SELECT current_setting($1) AS datestyle, current_setting($2) AS timezone',
      ['DateStyle', 'TimeZone'],
    );
    expect(shown).toEqual([{ datestyle: 'SQL, DMY', timezone: 'Asia/Kolkata' }]);

    await migrateOutbox(db);
    await migrateInbox(db);
    await migrateIdempotency(db);
    const received: OrderCreatedV2Payload[] = [];
    const handlers: InventoryServiceHandlers = {
      'order.OrderCancelled': { 1: async () => undefined },
      'order.OrderCreated': { 2: async (envelope) => void received.push(envelope.payload) },
    };
    const broker = new InProcessBroker({ inProcess: { retryDelaysMs: [0] } });
    broker.subscribe(createInventoryServiceConsumer({ db, handlers }));
    let relay: OutboxRelay | undefined;
    try {
      relay = createOutboxRelay({ db, publisher: broker.relayPublisher(), pollIntervalMs: 50 });
      await relay.start();
      const written = order();
      const envelope = await db.transaction((tx) => writeOrderCreatedV2(tx, written));
      await broker.waitFor(() => broker.consumed.length >= 1);

      const body = JSON.parse(broker.published[0]!.body) as typeof envelope;
      expect(body.occurredAt).toBe(envelope.occurredAt);
      expect(body.payload).toEqual(written);
      expect(received).toEqual([written]);
      expect(broker.deadLettered).toEqual([]);
      const stats = await outboxStats(db);
      expect(stats).toMatchObject({ ready: 0, processing: 0, sent: 1, dead: 0 });
      expect(await listDeadOutboxEvents(db)).toEqual([]);
    } finally {
      await relay?.stop();
      broker.close();
    }

    const request = { key: `k-${randomUUID()}`, fingerprint: 'sha-256:abc' };
    let calls = 0;
    const handler = async () => ({ calls: ++calls });
    expect(await runIdempotent(db, request, handler)).toEqual({
      kind: 'fresh',
      result: { calls: 1 },
      stored: true,
    });
    expect(await runIdempotent(db, request, handler)).toEqual({
      kind: 'replayed',
      result: { calls: 1 },
    });
  });
});

function order(): OrderCreatedV2Payload {
  return {
    orderId: randomUUID(),
    customerId: randomUUID(),
    placedAt: '2026-01-02T03:04:05Z',
    channel: 'web',
    lines: [{ sku: 'SKU-1', quantity: 1, unitPrice: { amountMinor: 100, currency: 'EUR' } }],
    total: { amountMinor: 100, currency: 'EUR' },
    shippingAddress: { line1: "O'Brien \\ 1", city: 'Köln', postalCode: '10115', country: 'DE' },
  };
}
