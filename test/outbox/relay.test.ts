import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  NonRetryableError,
  RecordingPublisher,
  pruneOutbox,
  createOutboxRelay,
  findOutboxEvent,
  listDeadOutboxEvents,
  outboxStats,
  reviveDeadOutboxEvents,
  writeOutboxEvent,
  type Database,
  type OutboxRelayOptions,
  type RelayBatchResult,
} from 'evgen/runtime';
import {
  DIALECTS,
  manualClock,
  manualTimers,
  openOutbox,
  outboxRows,
  pgliteOnce,
  type OutboxFixture,
  writeOrders,
} from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe.each(DIALECTS)('outbox relay on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  const open = async () => (fixture = await openOutbox(dialect, pglite));
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });
  const relayFor = (
    f: OutboxFixture,
    rest: Omit<OutboxRelayOptions, 'db' | 'schema'> & { db?: Database },
  ) => createOutboxRelay({ db: f.db, schema: f.schema, notifyChannel: f.channel, ...rest });

  it('publishes every due row once, in id order per aggregate, and marks it SENT', async () => {
    const f = await open();
    const ids = await writeOrders(f, ['a', 'b', 'a', 'c', 'a', 'b']);
    const publisher = new RecordingPublisher();
    const relay = relayFor(f, { publisher, batchSize: 100 });
    expect(await relay.runOnce()).toEqual({
      claimed: 6,
      published: 6,
      failed: 0,
      dead: 0,
      released: 0,
    });
    expect(publisher.published.map((m) => m.envelope.messageId).sort()).toEqual([...ids].sort());
    const order = (aggregate: string) =>
      publisher.published
        .filter((m) => m.envelope.aggregateId === aggregate)
        .map((m) => Number(m.outboxId));
    for (const aggregate of ['a', 'b', 'c'])
      expect(order(aggregate)).toEqual([...order(aggregate)].sort((x, y) => x - y));
    expect(publisher.published.every((m) => m.attempts === 0)).toBe(true);
    const rows = await outboxRows(f);
    expect(
      rows.every((r) => r.status === 'SENT' && r.sent_ms !== null && r.locked_until_ms === null),
    ).toBe(true);
    expect(await relay.runOnce()).toMatchObject({ claimed: 0 });
    expect(publisher.calls).toHaveLength(6);
    expect(relay.metrics()).toMatchObject({ batches: 2, claimed: 6, published: 6 });
  });

  it('keeps publishing and recording when an observability hook throws', async () => {
    const f = await open();
    await writeOrders(f, ['a', 'a', 'b', 'poison']);
    const publisher = new RecordingPublisher((message) =>
      message.envelope.aggregateId === 'poison' ? new NonRetryableError('poison') : undefined,
    );
    const boom = () => {
      throw new Error('metrics backend down');
    };
    const relay = relayFor(f, {
      publisher,
      hooks: { onPublished: boom, onFailed: boom, onBatch: boom },
    });
    expect(await relay.runOnce()).toEqual({
      claimed: 4,
      published: 3,
      failed: 0,
      dead: 1,
      released: 0,
    });
    expect((await outboxRows(f)).map((r) => r.status)).toEqual(['SENT', 'SENT', 'SENT', 'DEAD']);
  });

  it('holds back later events of an aggregate while an earlier one backs off, then publishes in order', async () => {
    const f = await open();
    const [a1, b1, a2, a3] = await writeOrders(f, ['a', 'b', 'a', 'a']);
    const clock = manualClock();
    const publisher = new RecordingPublisher((message) =>
      message.envelope.messageId === a1 && message.attempts === 0
        ? new Error('broker unavailable')
        : undefined,
    );
    const relay = relayFor(f, {
      publisher,
      clock: clock.clock,
      random: () => 0,
      backoff: { baseMs: 1_000, capMs: 60_000, jitter: 0 },
    });
    // a1 fails; a2 and a3 were claimed behind it and are given back untried.
    expect(await relay.runOnce()).toEqual({
      claimed: 4,
      published: 1,
      failed: 1,
      dead: 0,
      released: 2,
    });
    expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([b1]);
    expect(publisher.calls.map((m) => m.envelope.messageId)).toEqual([a1, b1]);
    // Still backing off: nothing of aggregate a may go, although a2 and a3 are READY and due.
    const rows = await outboxRows(f);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['READY', 1],
      ['SENT', 1],
      ['READY', 0],
      ['READY', 0],
    ]);
    expect(await relay.runOnce()).toMatchObject({ claimed: 0 });
    clock.advance(1_000);
    expect(await relay.runOnce()).toMatchObject({ claimed: 3, published: 3 });
    expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([b1, a1, a2, a3]);
    expect(publisher.published[1]!.attempts).toBe(1);
  });

  it('backs off exponentially with jitter up to the cap, recording attempts and the error', async () => {
    const f = await open();
    await writeOrders(f, ['a']);
    const clock = manualClock();
    const publisher = new RecordingPublisher(() => new Error('nack'));
    const relay = relayFor(f, {
      publisher,
      clock: clock.clock,
      random: () => 0.5,
      maxAttempts: 10,
      backoff: { baseMs: 100, capMs: 350, jitter: 0.1 },
    });
    const seen: number[][] = [];
    for (const expectedDelay of [105, 210, 368, 368]) {
      const before = clock.now();
      expect(await relay.runOnce()).toMatchObject({ claimed: 1, failed: 1 });
      const [row] = await outboxRows(f);
      seen.push([row!.attempts, row!.available_ms - before]);
      expect(row).toMatchObject({
        status: 'READY',
        last_error: 'Error: nack',
        locked_until_ms: null,
      });
      expect(row!.available_ms - before).toBe(expectedDelay);
      // One ms early is not due yet; at the instant it is.
      clock.advance(expectedDelay - 1);
      expect(await relay.runOnce()).toMatchObject({ claimed: 0 });
      clock.advance(1);
    }
    expect(seen.map(([attempts]) => attempts)).toEqual([1, 2, 3, 4]);
    expect(publisher.calls.map((m) => m.attempts)).toEqual([0, 1, 2, 3]);
  });

  it('moves a row to DEAD after maxAttempts, keeps last_error, and holds its aggregate back until revived', async () => {
    const f = await open();
    const [poison, next] = await writeOrders(f, ['a', 'a']);
    const clock = manualClock();
    const publisher = new RecordingPublisher((message, call) =>
      message.envelope.messageId === poison ? new Error(`rejected #${call}`) : undefined,
    );
    const failures: boolean[] = [];
    const relay = relayFor(f, {
      publisher,
      clock: clock.clock,
      maxAttempts: 3,
      backoff: { baseMs: 10, capMs: 10, jitter: 0 },
      hooks: { onFailed: (_message, failure) => failures.push(failure.dead) },
    });
    for (let round = 0; round < 3; round++) {
      await relay.runOnce();
      clock.advance(10);
    }
    expect(failures).toEqual([false, false, true]);
    let rows = await outboxRows(f);
    expect(rows[0]).toMatchObject({
      status: 'DEAD',
      attempts: 3,
      last_error: 'Error: rejected #3',
    });
    expect(rows[1]).toMatchObject({ status: 'READY', attempts: 0 });
    // The DEAD row blocks the later row of its aggregate (publishing it would break the order).
    expect(await relay.runOnce()).toMatchObject({ claimed: 0 });
    expect(await listDeadOutboxEvents(f.db, { schema: f.schema })).toMatchObject([
      { messageId: poison, attempts: 3, blocked: 1 },
    ]);
    // Revived (the publisher now accepts it): published first, then the row that waited.
    publisher.behave(() => undefined);
    expect(
      await reviveDeadOutboxEvents(f.db, { messageIds: [poison!] }, { schema: f.schema }),
    ).toMatchObject([{ messageId: poison }]);
    expect(await relay.runOnce()).toMatchObject({ claimed: 2, published: 2 });
    expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([poison, next]);
    rows = await outboxRows(f);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['SENT', 1],
      ['SENT', 1],
    ]);
    expect(relay.metrics()).toMatchObject({ failed: 2, dead: 1, published: 2 });
  });

  it('sends a non-retryable publish failure straight to DEAD', async () => {
    const f = await open();
    await writeOrders(f, ['a']);
    const relay = relayFor(f, {
      publisher: new RecordingPublisher(() => new NonRetryableError('message too large')),
    });
    expect(await relay.runOnce()).toMatchObject({ dead: 1, failed: 0 });
    const [row] = await outboxRows(f);
    expect(row).toMatchObject({
      status: 'DEAD',
      attempts: 1,
      last_error: 'NonRetryableError: message too large',
    });
  });

  it('lets another relay reclaim rows whose lease expired when their relay died mid-publish', async () => {
    const f = await open();
    const [a1, a2] = await writeOrders(f, ['a', 'a']);
    const clock = manualClock();
    // Relay A claims both rows and hangs in publish() on the first: it "died" holding the lease.
    const dying = new RecordingPublisher(() => 'hang');
    // Timers that never fire: A stays inside publish() as a dead process would (no publish timeout).
    const relayA = relayFor(f, {
      publisher: dying,
      clock: clock.clock,
      leaseMs: 5_000,
      timers: manualTimers().timers,
    });
    const abandoned = relayA.runOnce();
    void abandoned.catch(() => undefined);
    await dying.waitForCalls(1);
    expect((await outboxRows(f)).map((r) => r.status)).toEqual(['PROCESSING', 'PROCESSING']);

    const healthy = new RecordingPublisher();
    const relayB = relayFor(f, {
      publisher: healthy,
      clock: clock.clock,
      leaseMs: 5_000,
      db: f.openAnother(),
    });
    expect(await relayB.runOnce()).toMatchObject({ claimed: 0 });
    clock.advance(4_999);
    expect(await relayB.runOnce()).toMatchObject({ claimed: 0 });
    clock.advance(1);
    expect(await relayB.runOnce()).toMatchObject({ claimed: 2, published: 2 });
    expect(healthy.published.map((m) => m.envelope.messageId)).toEqual([a1, a2]);
    // The reclaimed attempt counts, and says why it happened.
    expect(healthy.published[0]!.attempts).toBe(1);
    const rows = await outboxRows(f);
    expect(rows.map((r) => r.status)).toEqual(['SENT', 'SENT']);
    expect(rows[0]!.last_error).toMatch(/lease expired/);
  });

  it('publishes again, with the same messageId, when the relay dies after the confirm and before SENT', async () => {
    const f = await open();
    const [id] = await writeOrders(f, ['a']);
    const clock = manualClock();
    const publisher = new RecordingPublisher();
    // The "crash": every statement that would record SENT fails, as if the process died right
    // there: the SENT update, and a claim when it carries an earlier batch's marks ($5 not empty).
    const recordsSent = (text: string, params?: readonly unknown[]) =>
      text.includes("SET status = 'SENT'") &&
      (!/^WITH (RECURSIVE )?sent/.test(text) || params?.[4] !== '{}');
    const crashing: Database = {
      ...f.db,
      query: (text, params, options) =>
        recordsSent(text, params)
          ? Promise.reject(new Error('killed before SENT'))
          : f.db.query(text, params, options),
    };
    const doomed = relayFor(f, { publisher, clock: clock.clock, leaseMs: 10_000, db: crashing });
    await expect(doomed.runOnce()).rejects.toThrow('killed before SENT');
    expect((await outboxRows(f)).map((r) => r.status)).toEqual(['PROCESSING']);
    clock.advance(10_000);
    expect(await relayFor(f, { publisher, clock: clock.clock }).runOnce()).toMatchObject({
      published: 1,
    });
    // At-least-once: the broker saw it twice under one id, which the consumers' inbox absorbs.
    expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([id, id]);
    expect((await outboxRows(f)).map((r) => r.status)).toEqual(['SENT']);
  });

  it('ignores a stale relay that finishes after its lease was taken over', async () => {
    const f = await open();
    await writeOrders(f, ['a']);
    const clock = manualClock();
    const late = deferred();
    const publishing = deferred();
    const slow = new RecordingPublisher(() => 'hang');
    slow.publish = async (message) => {
      slow.calls.push(message);
      publishing.resolve();
      await late.promise;
      throw new Error('timed out, long after the lease');
    };
    const relayA = relayFor(f, {
      publisher: slow,
      clock: clock.clock,
      leaseMs: 1_000,
      timers: manualTimers().timers,
    });
    const stale = relayA.runOnce();
    // A holds the lease and is inside its publish.
    await publishing.promise;
    clock.advance(1_000);
    const relayB = relayFor(f, {
      publisher: new RecordingPublisher(),
      clock: clock.clock,
      db: f.openAnother(),
    });
    expect(await relayB.runOnce()).toMatchObject({ published: 1 });
    late.resolve();
    // A's failure report carries A's lease token, which no longer matches: the row stays SENT.
    await expect(stale).resolves.toMatchObject({ failed: 1 });
    expect((await outboxRows(f)).map((r) => r.status)).toEqual(['SENT']);
  });

  it('stops gracefully: the in-flight publish is recorded, untried rows are released', async () => {
    const f = await open();
    const [a1] = await writeOrders(f, ['a', 'a', 'a']);
    const gate = deferred();
    const publishing = deferred();
    const publisher = new RecordingPublisher();
    const original = publisher.publish.bind(publisher);
    publisher.publish = async (message) => {
      if (message.envelope.messageId === a1) {
        publishing.resolve();
        await gate.promise;
      }
      return original(message);
    };
    // The loop's other lane finds nothing to claim while the batch holds the rows. Its claim is
    // awaited before stop(): a claim still on its way (a new pool connection on a loaded machine)
    // would run after the in-flight row is SENT, take the two released rows and release them again.
    const otherLaneIdle = deferred();
    const relay = relayFor(f, {
      publisher,
      pollIntervalMs: 600_000,
      minPollIntervalMs: 600_000, // no adaptive polls either (MySQL/MariaDB default to a short floor)
      hooks: { onBatch: (batch) => batch.claimed === 0 && otherLaneIdle.resolve() },
    });
    await relay.start();
    // The batch is claimed (PROCESSING) and its first publish is in flight.
    await publishing.promise;
    await otherLaneIdle.promise;
    expect((await outboxRows(f)).map((r) => r.status)).toEqual([
      'PROCESSING',
      'PROCESSING',
      'PROCESSING',
    ]);
    const stopped = relay.stop();
    gate.resolve();
    await stopped;
    const rows = await outboxRows(f);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['SENT', 1],
      ['READY', 0],
      ['READY', 0],
    ]);
    expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([a1]);
    expect(relay.metrics()).toMatchObject({ published: 1, released: 2 });
  });

  it('wakes on NOTIFY from a committed write without waiting for the poll interval', async () => {
    const f = await open();
    const publisher = new RecordingPublisher();
    const batches: RelayBatchResult[] = [];
    let idle!: () => void;
    const firstIdle = new Promise<void>((resolve) => (idle = resolve));
    const relay = relayFor(f, {
      publisher,
      pollIntervalMs: 600_000,
      minPollIntervalMs: 600_000, // no adaptive polls either (MySQL/MariaDB default to a short floor)
      hooks: {
        onBatch: (result) => {
          batches.push(result);
          idle();
        },
      },
    });
    await relay.start();
    try {
      await firstIdle;
      expect(batches).toEqual([{ claimed: 0, published: 0, failed: 0, dead: 0, released: 0 }]);
      // The relay now sleeps for ten minutes unless the NOTIFY sent at commit wakes it.
      const [id] = await writeOrders(f, ['a']);
      await publisher.waitForPublished(1);
      expect(publisher.published[0]!.envelope.messageId).toBe(id);
    } finally {
      await relay.stop();
    }
  });

  it.runIf(dialect !== 'mariadb')(
    'notifies once per transaction, and a write after a rolled-back savepoint still wakes the relay',
    async () => {
      const f = await open();
      const notifications: string[] = [];
      const unlisten = await f.db.listen(f.channel, (payload) => notifications.push(payload));
      const publisher = new RecordingPublisher();
      let idle!: () => void;
      const firstIdle = new Promise<void>((resolve) => (idle = resolve));
      const relay = relayFor(f, {
        publisher,
        pollIntervalMs: 600_000,
        minPollIntervalMs: 600_000, // no adaptive polls either (MySQL/MariaDB default to a short floor)
        hooks: { onBatch: () => idle() },
      });
      await relay.start();
      try {
        await firstIdle;
        const options = { schema: f.schema, notifyChannel: f.channel };
        // Three events in one transaction: only the first write calls pg_notify.
        const marks = await f.db.transaction(async (tx) => {
          const seen: (string | null)[] = [];
          for (const orderId of ['t1', 't2', 't3']) {
            await writeOutboxEvent(tx, orderPlacedV1, { orderId, amount: 1 }, {}, options);
            const mark = await tx.query<{ mark: string | null }>(
              `SELECT current_setting('evgen.outbox_notified', true) AS mark`,
            );
            seen.push(mark.rows[0]!.mark);
          }
          return seen;
        });
        expect(marks).toEqual([f.channel, f.channel, f.channel]);
        await publisher.waitForPublished(3);
        // The first write's NOTIFY is undone with its savepoint; the next write must send it again.
        await f.db.transaction(async (tx) => {
          await tx.query('SAVEPOINT undone');
          await writeOutboxEvent(tx, orderPlacedV1, { orderId: 'gone', amount: 1 }, {}, options);
          await tx.query('ROLLBACK TO SAVEPOINT undone');
          await writeOutboxEvent(tx, orderPlacedV1, { orderId: 'kept', amount: 1 }, {}, options);
        });
        await publisher.waitForPublished(4);
        expect(publisher.published.map((m) => m.envelope.aggregateId)).toEqual([
          't1',
          't2',
          't3',
          'kept',
        ]);
        // One notification per committed transaction.
        for (let tries = 0; tries < 100 && notifications.length < 2; tries++)
          await new Promise((resolve) => setTimeout(resolve, 10));
        expect(notifications).toHaveLength(2);
      } finally {
        await relay.stop();
        await unlisten();
      }
    },
  );

  it.runIf(dialect === 'mariadb')(
    'wakes the relays of this process once per committed transaction, never for a rolled-back one (no NOTIFY on MariaDB)',
    async () => {
      const f = await open();
      const wakes: string[] = [];
      const unlisten = await f.db.listen(f.channel, (payload) => wakes.push(payload));
      const publisher = new RecordingPublisher();
      let idle!: () => void;
      const firstIdle = new Promise<void>((resolve) => (idle = resolve));
      const relay = relayFor(f, {
        publisher,
        pollIntervalMs: 600_000,
        minPollIntervalMs: 600_000, // no adaptive polls either (MySQL/MariaDB default to a short floor)
        hooks: { onBatch: () => idle() },
      });
      await relay.start();
      try {
        await firstIdle;
        const options = { schema: f.schema, notifyChannel: f.channel };
        await f.db.transaction(async (tx) => {
          for (const orderId of ['t1', 't2', 't3'])
            await writeOutboxEvent(tx, orderPlacedV1, { orderId, amount: 1 }, {}, options);
          // Nothing is woken before the commit: a relay would find nothing yet.
          expect(wakes).toEqual([]);
        });
        expect(wakes).toEqual(['']);
        // The relay sleeps ten minutes unless the wake-up after the commit ends its wait.
        await publisher.waitForPublished(3);
        await expect(
          f.db.transaction(async (tx) => {
            await writeOutboxEvent(tx, orderPlacedV1, { orderId: 'gone', amount: 1 }, {}, options);
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect(wakes).toEqual(['']);
        expect(publisher.published.map((m) => m.envelope.aggregateId)).toEqual(['t1', 't2', 't3']);
      } finally {
        await relay.stop();
        await unlisten();
      }
    },
  );

  it('cleans up only SENT rows older than the retention, in batches', async () => {
    const f = await open();
    await writeOrders(f, ['a', 'b', 'c', 'd', 'e', 'dead', 'ready']);
    const publisher = new RecordingPublisher((message) =>
      message.envelope.aggregateId === 'dead'
        ? new NonRetryableError('poison')
        : message.envelope.aggregateId === 'ready'
          ? 'hang'
          : undefined,
    );
    void relayFor(f, { publisher, leaseMs: 60_000, timers: manualTimers().timers }).runOnce();
    await publisher.waitForCalls(7);
    // Wait for the 5 good rows and the dead one to be recorded (the 'ready' one hangs, PROCESSING).
    for (let tries = 0; tries < 200; tries++) {
      const stats = await outboxStats(f.db, { schema: f.schema });
      if (stats.sent === 5 && stats.dead === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await outboxStats(f.db, { schema: f.schema })).toMatchObject({
      sent: 5,
      dead: 1,
      processing: 1,
      ready: 0,
    });
    // Just sent: younger than a one-hour retention, nothing goes.
    expect(await pruneOutbox(f.db, { schema: f.schema, olderThanMs: 3_600_000 })).toBe(0);
    const later = new Date(Date.now() + 2 * 3_600_000);
    expect(
      await pruneOutbox(f.db, {
        schema: f.schema,
        olderThanMs: 3_600_000,
        batchSize: 2,
        now: later,
      }),
    ).toBe(5);
    const rows = await outboxRows(f);
    expect(rows.map((r) => r.status).sort()).toEqual(['DEAD', 'PROCESSING']);
  });

  it('findOutboxEvent says whether a messageId was written, published, retried or went DEAD', async () => {
    const f = await open();
    const [sent, failing, dead] = await writeOrders(f, ['sent', 'failing', 'dead']);
    const options = { schema: f.schema };
    expect(await findOutboxEvent(f.db, sent!, options)).toMatchObject({
      status: 'READY',
      attempts: 0,
      sentAt: null,
      lastError: null,
    });
    const publisher = new RecordingPublisher((message) =>
      message.envelope.aggregateId === 'dead'
        ? new NonRetryableError('poison')
        : message.envelope.aggregateId === 'failing'
          ? new Error('rejected by a broker plug-in')
          : undefined,
    );
    await relayFor(f, { publisher }).runOnce();
    const published = await findOutboxEvent(f.db, sent!, options);
    expect(published).toMatchObject({
      messageId: sent,
      eventType: 'test.OrderPlaced',
      aggregateId: 'sent',
      status: 'SENT',
      attempts: 1,
      lastError: null,
    });
    expect(published!.sentAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(published!.createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const retrying = await findOutboxEvent(f.db, failing!, options);
    expect(retrying).toMatchObject({ status: 'READY', attempts: 1, sentAt: null });
    expect(retrying!.lastError).toContain('rejected by a broker plug-in');
    expect(await findOutboxEvent(f.db, dead!, options)).toMatchObject({
      status: 'DEAD',
      attempts: 1,
      lastError: 'NonRetryableError: poison',
    });
    // Never written: unknown ids, including ones that are not even UUIDs.
    expect(
      await findOutboxEvent(f.db, '00000000-0000-4000-8000-000000000000', options),
    ).toBeUndefined();
    expect(await findOutboxEvent(f.db, 'not-a-uuid', options)).toBeUndefined();
  });

  it('reports the backlog', async () => {
    const f = await open();
    expect(await outboxStats(f.db, { schema: f.schema })).toEqual({
      ready: 0,
      processing: 0,
      sent: 0,
      dead: 0,
      due: 0,
      oldestUnsentAgeMs: null,
    });
    await writeOrders(f, ['a', 'b']);
    const stats = await outboxStats(f.db, { schema: f.schema });
    expect(stats).toMatchObject({ ready: 2, due: 2, processing: 0, sent: 0, dead: 0 });
    expect(stats.oldestUnsentAgeMs).toBeGreaterThanOrEqual(0);
  });
});
