/**
 * DEAD outbox rows: listed with filters and the rows waiting behind them, revived by id, by
 * messageId or all at once (READY, attempts 0), after which the relay resumes the aggregate in order.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  NonRetryableError,
  RecordingPublisher,
  createOutboxRelay,
  listDeadOutboxEvents,
  reviveDeadOutboxEvents,
} from 'evgen/runtime';
import {
  DIALECTS,
  openOutbox,
  outboxRows,
  pgliteOnce,
  type OutboxFixture,
  writeOrders,
} from './support/dialects.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

describe.each(DIALECTS)('DEAD outbox rows on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  /** Writes the rows and lets a relay kill every row whose amount is in `poison`. */
  async function withDead(orderIds: readonly string[], poison: ReadonlySet<number>) {
    const f = (fixture = await openOutbox(dialect, pglite));
    const ids = await writeOrders(f, orderIds, { assignAggregateVersion: true });
    const publisher = new RecordingPublisher((message) =>
      poison.has((message.envelope.payload as { amount: number }).amount)
        ? new NonRetryableError('broker refused the payload')
        : undefined,
    );
    const relay = createOutboxRelay({
      db: f.db,
      schema: f.schema,
      publisher,
      notifyChannel: false,
    });
    for (let round = 0; round < 5; round++) await relay.runOnce();
    return { f, ids, publisher, relay };
  }

  it('lists DEAD rows oldest first with their diagnostics and how many rows wait behind each', async () => {
    // amounts: a0 a1(dead) a2 b3(dead) c4 b5
    const { f, ids } = await withDead(['a', 'a', 'a', 'b', 'c', 'b'], new Set([1, 3]));
    const dead = await listDeadOutboxEvents(f.db, { schema: f.schema });
    expect(dead).toMatchObject([
      {
        messageId: ids[1],
        eventType: 'test.OrderPlaced',
        schemaVersion: 1,
        aggregateType: 'Order',
        aggregateId: 'a',
        aggregateVersion: 2,
        attempts: 1,
        lastError: 'NonRetryableError: broker refused the payload',
        blocked: 1,
      },
      { messageId: ids[3], aggregateId: 'b', aggregateVersion: 1, blocked: 1 },
    ]);
    expect(dead[0]!.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The rows behind them wait (READY, never tried), the rest is SENT.
    expect((await outboxRows(f)).map((r) => r.status)).toEqual([
      'SENT',
      'DEAD',
      'READY',
      'DEAD',
      'SENT',
      'READY',
    ]);
    // Filters and paging.
    expect(
      (await listDeadOutboxEvents(f.db, { schema: f.schema, aggregateId: 'b' })).map(
        (d) => d.messageId,
      ),
    ).toEqual([ids[3]]);
    expect(await listDeadOutboxEvents(f.db, { schema: f.schema, eventType: 'test.Other' })).toEqual(
      [],
    );
    const first = await listDeadOutboxEvents(f.db, { schema: f.schema, limit: 1 });
    expect(first.map((d) => d.messageId)).toEqual([ids[1]]);
    const next = await listDeadOutboxEvents(f.db, {
      schema: f.schema,
      limit: 1,
      afterId: first[0]!.id,
    });
    expect(next.map((d) => d.messageId)).toEqual([ids[3]]);
  });

  it('revives by id: READY with attempts 0; the relay publishes it, then the rows that waited, in order', async () => {
    const { f, ids, publisher, relay } = await withDead(['a', 'a', 'a'], new Set([1]));
    expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([ids[0]]);
    const [dead] = await listDeadOutboxEvents(f.db, { schema: f.schema });
    publisher.behave(() => undefined);
    const revived = await reviveDeadOutboxEvents(
      f.db,
      { ids: [dead!.id] },
      { schema: f.schema, notifyChannel: false },
    );
    expect(revived).toEqual([
      { id: dead!.id, messageId: ids[1], aggregateType: 'Order', aggregateId: 'a' },
    ]);
    expect((await outboxRows(f))[1]).toMatchObject({ status: 'READY', attempts: 0 });
    // Reviving again is a no-op.
    expect(await reviveDeadOutboxEvents(f.db, { ids: [dead!.id] }, { schema: f.schema })).toEqual(
      [],
    );
    await relay.runOnce();
    expect(publisher.published.map((m) => m.envelope.messageId)).toEqual(ids);
    expect(await listDeadOutboxEvents(f.db, { schema: f.schema })).toEqual([]);
  });

  it('revives all (optionally per aggregate) and refuses malformed ids without touching rows', async () => {
    const { f, ids, publisher, relay } = await withDead(['a', 'b', 'c'], new Set([0, 1, 2]));
    expect(await listDeadOutboxEvents(f.db, { schema: f.schema })).toHaveLength(3);
    await expect(
      reviveDeadOutboxEvents(f.db, { ids: ['1; DROP TABLE x'] }, { schema: f.schema }),
    ).rejects.toThrow(/invalid outbox id/);
    await expect(
      reviveDeadOutboxEvents(f.db, { messageIds: ['not-a-uuid'] }, { schema: f.schema }),
    ).rejects.toThrow(/invalid messageId/);
    expect(await listDeadOutboxEvents(f.db, { schema: f.schema })).toHaveLength(3);
    publisher.behave(() => undefined);
    const onlyB = await reviveDeadOutboxEvents(
      f.db,
      { all: true, aggregateId: 'b' },
      { schema: f.schema, notifyChannel: false },
    );
    expect(onlyB.map((r) => r.messageId)).toEqual([ids[1]]);
    const rest = await reviveDeadOutboxEvents(
      f.db,
      { all: true },
      { schema: f.schema, notifyChannel: false },
    );
    expect(rest.map((r) => r.messageId)).toEqual([ids[0], ids[2]]);
    await relay.runOnce();
    expect(publisher.published.map((m) => m.envelope.messageId).sort()).toEqual([...ids].sort());
    expect((await outboxRows(f)).every((r) => r.status === 'SENT')).toBe(true);
  });
});
