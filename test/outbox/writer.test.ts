import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  RecordingPublisher,
  ValidationError,
  createOutboxRelay,
  migrateOutbox,
  outboxMigrationSql,
  writeOutboxEvent,
  type Envelope,
} from 'evgen/runtime';
import {
  createOrdersTable,
  DIALECTS,
  openOutbox,
  outboxRows,
  pgliteOnce,
  type OutboxFixture,
} from './support/dialects.js';
import { orderPlacedV1, type OrderPlacedV1Payload } from './support/test-event.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

describe.each(DIALECTS)('outbox writer on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  const open = async () => (fixture = await openOutbox(dialect, pglite));
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('commits the business row and the outbox row together', async () => {
    const f = await open();
    const orders = await createOrdersTable(f);
    const envelope = await f.db.transaction(async (tx) => {
      await tx.query(f.sql(`INSERT INTO ${orders} (order_id, amount) VALUES ($1, $2)`), ['o-1', 5]);
      return writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId: 'o-1', amount: 5 },
        { traceId: 't-1' },
        { schema: f.schema },
      );
    });
    expect(envelope).toMatchObject({
      eventType: 'test.OrderPlaced',
      aggregateType: 'Order',
      aggregateId: 'o-1',
      traceId: 't-1',
    });
    const rows = await outboxRows(f);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      event_id: envelope.messageId,
      aggregate_id: 'o-1',
      status: 'READY',
      attempts: 0,
    });
    expect((await f.db.query(`SELECT * FROM ${orders}`)).rowCount).toBe(1);
  });

  it('rolls the outbox row back with the business row', async () => {
    const f = await open();
    const orders = await createOrdersTable(f);
    await expect(
      f.db.transaction(async (tx) => {
        await tx.query(f.sql(`INSERT INTO ${orders} (order_id, amount) VALUES ($1, $2)`), [
          'o-1',
          5,
        ]);
        await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'o-1', amount: 5 },
          {},
          { schema: f.schema },
        );
        throw new Error('business rule failed after the write');
      }),
    ).rejects.toThrow('business rule failed');
    expect(await outboxRows(f)).toEqual([]);
    expect((await f.db.query(`SELECT * FROM ${orders}`)).rowCount).toBe(0);
  });

  it('rejects an invalid payload with every violation and inserts nothing', async () => {
    const f = await open();
    const bad = { amount: -1, extra: true } as unknown as OrderPlacedV1Payload;
    const error = await f.db
      .transaction((tx) => writeOutboxEvent(tx, orderPlacedV1, bad, {}, { schema: f.schema }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    const pointers = (error as ValidationError).violations.map((v) => v.pointer).sort();
    expect(pointers).toEqual(['/amount', '/extra', '/orderId']);
    expect(await outboxRows(f)).toEqual([]);
  });

  it('writes several events in one transaction and assigns consecutive aggregate versions', async () => {
    const f = await open();
    const options = { schema: f.schema, assignAggregateVersion: true };
    const envelopes = await f.db.transaction(async (tx) => [
      await writeOutboxEvent(tx, orderPlacedV1, { orderId: 'a', amount: 1 }, {}, options),
      await writeOutboxEvent(tx, orderPlacedV1, { orderId: 'b', amount: 1 }, {}, options),
      await writeOutboxEvent(tx, orderPlacedV1, { orderId: 'a', amount: 2 }, {}, options),
    ]);
    expect(envelopes.map((e) => [e.aggregateId, e.aggregateVersion])).toEqual([
      ['a', 1],
      ['b', 1],
      ['a', 2],
    ]);
    await f.db.transaction((tx) =>
      writeOutboxEvent(tx, orderPlacedV1, { orderId: 'a', amount: 3 }, {}, options),
    );
    const rows = await outboxRows(f);
    expect(rows.map((r) => [r.aggregate_id, r.aggregate_version])).toEqual([
      ['a', 1],
      ['b', 1],
      ['a', 2],
      ['a', 3],
    ]);
  });

  it('keeps a caller-given aggregate version and refuses to mix it with assignment', async () => {
    const f = await open();
    const envelope = await f.db.transaction((tx) =>
      writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId: 'a', amount: 1 },
        { aggregateVersion: 7 },
        { schema: f.schema },
      ),
    );
    expect(envelope.aggregateVersion).toBe(7);
    await expect(
      f.db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'a', amount: 1 },
          { aggregateVersion: 8 },
          { schema: f.schema, assignAggregateVersion: true },
        ),
      ),
    ).rejects.toThrow(TypeError);
    expect((await outboxRows(f)).map((r) => r.aggregate_version)).toEqual([7]);
  });

  it('lets the relay rebuild exactly the envelope the writer returned', async () => {
    const f = await open();
    const written: Envelope[] = await f.db.transaction(async (tx) => [
      await writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId: 'o-9', amount: 3, note: 'gift' },
        {
          occurredAt: '2024-05-06T07:08:09.123+02:00',
          traceId: 'trace',
          correlationId: 'corr',
          causationId: 'cause',
          headers: { tenant: 'acme' },
        },
        { schema: f.schema, assignAggregateVersion: true },
      ),
      await writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId: 'o-10', amount: 0 },
        {},
        { schema: f.schema },
      ),
    ]);
    expect(written[0]!.occurredAt).toBe('2024-05-06T05:08:09.123Z');
    const publisher = new RecordingPublisher();
    await createOutboxRelay({
      db: f.db,
      publisher,
      schema: f.schema,
      notifyChannel: false,
    }).runOnce();
    expect(publisher.published.map((m) => m.envelope)).toEqual(written);
    expect(publisher.published[0]!.headers).toEqual({ tenant: 'acme' });
    expect(publisher.published[1]!.headers).toEqual({});
  });

  it('refuses a messageId that is not a UUID and bad table names', async () => {
    const f = await open();
    await expect(
      f.db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'a', amount: 1 },
          { messageId: 'nope' },
          { schema: f.schema },
        ),
      ),
    ).rejects.toThrow(ValidationError);
    await expect(
      f.db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'a', amount: 1 },
          { occurredAt: 'yesterday-ish', aggregateVersion: -1 },
          { schema: f.schema },
        ),
      ),
    ).rejects.toMatchObject({
      violations: [{ pointer: '/occurredAt' }, { pointer: '/aggregateVersion' }],
    });
    await expect(
      f.db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'a', amount: 1 },
          {},
          { schema: f.schema, table: 'x"; DROP' },
        ),
      ),
    ).rejects.toThrow(/invalid SQL identifier/);
    expect(await outboxRows(f)).toEqual([]);
  });

  it('migrates repeatedly and concurrently without error', async () => {
    const f = await open();
    await migrateOutbox(f.db, { schema: f.schema });
    const others = Array.from({ length: 4 }, () => f.openAnother(2));
    await Promise.all(
      others.map((db) => migrateOutbox(db, { schema: f.schema, table: 'second_outbox' })),
    );
    await migrateOutbox(f.db, { schema: f.schema, table: 'second_outbox' });
    const tables = await f.db.query<{ table_name: string }>(
      f.sql(
        `SELECT table_name AS table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`,
      ),
      [f.schema],
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual([
      'outbox_event',
      'outbox_event_aggregate_version',
      'second_outbox',
      'second_outbox_aggregate_version',
    ]);
    expect(outboxMigrationSql({ schema: f.schema }, f.db.dialect)).toContain(
      `CREATE TABLE IF NOT EXISTS ${f.table('outbox_event')}`,
    );
  });
});

describe.each(['postgres', 'mariadb'] as const)(
  'aggregate versions under concurrent writers on %s',
  (dialect) => {
    it('gives concurrent transactions on one aggregate distinct consecutive versions', async () => {
      const f = await openOutbox(dialect, pglite);
      try {
        const dbs = Array.from({ length: 4 }, () => f.openAnother(2));
        const envelopes = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            dbs[i % dbs.length]!.transaction((tx) =>
              writeOutboxEvent(
                tx,
                orderPlacedV1,
                { orderId: 'hot', amount: i },
                {},
                { schema: f.schema, assignAggregateVersion: true },
              ),
            ),
          ),
        );
        expect(envelopes.map((e) => e.aggregateVersion).sort((a, b) => a! - b!)).toEqual(
          Array.from({ length: 20 }, (_, i) => i + 1),
        );
        // Writers of one aggregate are serialised by the counter row, so id order is version order.
        const rows = await outboxRows(f);
        expect(rows.map((r) => r.aggregate_version)).toEqual(
          Array.from({ length: 20 }, (_, i) => i + 1),
        );
      } finally {
        await f.close();
      }
    });
  },
);
