/**
 * SENT marks that fail to write are kept, not dropped: a row whose publish was confirmed while
 * its UPDATE could not run (the database cut through the TCP fault proxy, a lock-wait timeout
 * 1205, a deadlock 1213) is marked SENT by the relay's next round trip that works, so it is
 * published once and the rows behind it follow at once — not after its lease ran out, when a
 * dropped mark let the relay publish it again (measured on MariaDB, 5 s cut under traffic with
 * 300 ms confirms: 19-20 rows published twice per run, none with the marks kept).
 *
 * stop() gives kept marks one last try: written if the database is back, else reported, and the
 * row is published again after its lease (same messageId, one effect through the inbox).
 *
 * Every lease here is long (60 s): a row still PROCESSING when the test looks was not marked.
 */
import type mysql from 'mysql2/promise';
import { afterEach, describe, expect, it } from 'vitest';
import {
  RecordingPublisher,
  createOutboxRelay,
  isUnavailableError,
  migrateInbox,
  mysqlDatabase,
  writeOutboxEvent,
  type Publisher,
} from 'evgen/runtime';
import { classifyError } from '../../src/runtime/errors.js';
import {
  checkEffects,
  createEffectsTable,
  effectConsumer,
  ORDER_EVENT,
} from '../support/effect-oracle.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { mariadbPool } from '../support/mariadb.js';
import {
  mariadbSessions,
  openOutbox,
  outboxRows,
  pgliteOnce,
  throughProxy,
  type DialectName,
  type OutboxFixture,
} from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const LEASE_MS = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function write(f: OutboxFixture, orderIds: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const orderId of orderIds) {
    const envelope = await f.db.transaction((tx) =>
      writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId, amount: 1 },
        {},
        { schema: f.schema, notifyChannel: false },
      ),
    );
    ids.push(envelope.messageId);
  }
  return ids;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * A publisher whose first publish starts `before`; every publish confirms only once it is done,
 * so the confirms of one batch land together (their marks go in one UPDATE).
 */
function confirmingAfter(before: () => Promise<void>): RecordingPublisher & Publisher {
  const publisher = new RecordingPublisher();
  const record = publisher.publish.bind(publisher);
  let done: Promise<void> | undefined;
  publisher.publish = async (message) => {
    done ??= before();
    await done;
    return record(message);
  };
  return publisher;
}

/** Confirms the first publish only after every connection through `cut` was reset and new ones are refused. */
function confirmingAfterCut(cut: FaultProxy): RecordingPublisher & Publisher {
  return confirmingAfter(async () => {
    await cut.refuse();
    cut.dropAll();
  });
}

describe.each(['postgres', 'mariadb'] as const satisfies readonly DialectName[])(
  'SENT marks kept through a database cut on %s',
  (dialect) => {
    let fixture: OutboxFixture | undefined;
    let proxy: FaultProxy | undefined;
    afterEach(async () => {
      await proxy?.close();
      proxy = undefined;
      await fixture?.close();
      fixture = undefined;
    });

    it('a row confirmed just as the database goes away is marked SENT when it returns: published once, the next row of its aggregate right after', async () => {
      const f = (fixture = await openOutbox(dialect, pgliteOnce()));
      const cut = (proxy = await startFaultProxy({
        targetPort: dialect === 'mariadb' ? 3306 : 5432,
      }));
      const relayDb = throughProxy(f, cut);
      // The confirm arrives after every connection was reset and new ones are refused.
      const publisher = confirmingAfterCut(cut);
      const errors: unknown[] = [];
      const relay = createOutboxRelay({
        db: relayDb.db,
        schema: f.schema,
        publisher,
        notifyChannel: false,
        leaseMs: LEASE_MS,
        pollIntervalMs: 200,
        hooks: { onError: (error) => errors.push(error) },
      });
      const [a1] = await write(f, ['a']);
      await relay.start();
      try {
        await publisher.waitForPublished(1);
        // Written while the relay cannot reach the database: it waits behind a1.
        const [a2] = await write(f, ['a']);
        await sleep(1_500);
        expect((await outboxRows(f)).map((row) => row.status)).toEqual(['PROCESSING', 'READY']);
        await cut.restore();
        const restoredAt = Date.now();
        // Far less than the 60 s lease: only a kept mark frees aggregate a this soon.
        await until(
          'both rows SENT after the cut',
          async () => (await outboxRows(f)).every((row) => row.status === 'SENT'),
          10_000,
        );
        console.log(`[${dialect}] cut ended → a1 marked, a2 SENT: ${Date.now() - restoredAt} ms`);
        expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([a1, a2]);
        expect((await outboxRows(f)).map((row) => row.attempts)).toEqual([1, 1]);
        expect(errors.length).toBeGreaterThan(0);
        expect(errors.every((error) => isUnavailableError(error))).toBe(true);
      } finally {
        await relay.stop({ timeoutMs: 5_000 });
        await relayDb.end();
      }
    });

    /**
     * One round whose confirm arrives after the database went away: the row's mark is kept and
     * the round fails. Returns the relay (on the proxy), still holding that mark.
     */
    async function roundWithKeptMark(f: OutboxFixture, cut: FaultProxy, errors: unknown[]) {
      const relayDb = throughProxy(f, cut);
      const publisher = confirmingAfterCut(cut);
      const relay = createOutboxRelay({
        db: relayDb.db,
        schema: f.schema,
        publisher,
        notifyChannel: false,
        leaseMs: LEASE_MS,
        hooks: { onError: (error) => errors.push(error) },
      });
      await relay.runOnce().catch((error: unknown) => errors.push(error));
      expect(publisher.published).toHaveLength(1);
      expect((await outboxRows(f)).map((row) => row.status)).toEqual(['PROCESSING']);
      return { relay, publisher, end: () => relayDb.end() };
    }

    it('stop() writes a kept SENT mark once the database is back: the row is SENT, and a relay after the lease publishes nothing', async () => {
      const f = (fixture = await openOutbox(dialect, pgliteOnce()));
      const cut = (proxy = await startFaultProxy({
        targetPort: dialect === 'mariadb' ? 3306 : 5432,
      }));
      const [a1] = await write(f, ['a']);
      const errors: unknown[] = [];
      const { relay, publisher, end } = await roundWithKeptMark(f, cut, errors);
      try {
        await cut.restore();
        // No round runs after this one: only stop's last try can write the mark.
        await relay.stop();
        expect((await outboxRows(f)).map((row) => [row.status, row.attempts])).toEqual([
          ['SENT', 1],
        ]);
        expect(errors.length).toBeGreaterThan(0);
        expect(errors.every((error) => isUnavailableError(error))).toBe(true);
      } finally {
        await end();
      }
      // Another relay, its clock past the first one's lease: nothing left to publish.
      const later = new RecordingPublisher();
      const next = createOutboxRelay({
        db: f.db,
        schema: f.schema,
        publisher: later,
        notifyChannel: false,
        clock: () => new Date(Date.now() + LEASE_MS + 1_000),
      });
      expect(await next.runOnce()).toMatchObject({ claimed: 0 });
      expect(later.published).toEqual([]);
      expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([a1]);
    });

    it('stop() whose last try fails too resolves and reports it; the row is published again after its lease with the same messageId, and the inbox applies it once', async () => {
      const f = (fixture = await openOutbox(dialect, pgliteOnce()));
      await migrateInbox(f.db, { schema: f.schema });
      await createEffectsTable(f.db, f.schema);
      const cut = (proxy = await startFaultProxy({
        targetPort: dialect === 'mariadb' ? 3306 : 5432,
      }));
      const envelope = await f.db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          ORDER_EVENT,
          { orderId: 'a', seq: 1 },
          {},
          { schema: f.schema, notifyChannel: false, assignAggregateVersion: true },
        ),
      );
      const errors: unknown[] = [];
      const { relay, publisher, end } = await roundWithKeptMark(f, cut, errors);
      try {
        const before = errors.length;
        // The database is still away: the last try fails, is reported, and stop still ends.
        await relay.stop();
        expect(errors.length).toBe(before + 1);
        expect(isUnavailableError(errors.at(-1))).toBe(true);
      } finally {
        await end();
      }
      const [held] = await outboxRows(f);
      expect([held!.status, held!.attempts]).toEqual(['PROCESSING', 1]);
      // Another relay: before the lease ends the row is not its to take; after it, it is.
      const later = new RecordingPublisher();
      let now = Date.now();
      const next = createOutboxRelay({
        db: f.db,
        schema: f.schema,
        publisher: later,
        notifyChannel: false,
        clock: () => new Date(now),
      });
      expect(await next.runOnce()).toMatchObject({ claimed: 0 });
      now = held!.locked_until_ms! + 1;
      expect(await next.runOnce()).toMatchObject({ claimed: 1, published: 1 });
      const [resent] = await outboxRows(f);
      expect([resent!.status, resent!.attempts, resent!.last_error]).toEqual([
        'SENT',
        2,
        'lease expired before the publish was confirmed',
      ]);
      const deliveries = [...publisher.published, ...later.published].map((m) => m.envelope);
      expect(deliveries.map((e) => e.messageId)).toEqual([envelope.messageId, envelope.messageId]);
      // Both deliveries reach the consumer: one effect.
      const consumer = effectConsumer(f.db, f.schema, 'inventory-service', undefined, {
        ordered: false,
      });
      const outcomes = [];
      for (const delivery of deliveries) outcomes.push(await consumer.handle(delivery));
      expect(outcomes).toEqual(['handled', 'duplicate']);
      expect(
        await checkEffects(f.db, f.schema, new Map([[envelope.messageId, 'a']])),
      ).toMatchObject({ effects: 1, lost: [], doubled: [] });
    });
  },
);

describe('SENT marks kept through lock errors on MariaDB', () => {
  let fixture: OutboxFixture | undefined;
  const sessions = mariadbSessions();
  afterEach(async () => {
    await sessions.endAll();
    await fixture?.close();
    fixture = undefined;
  });

  /** A relay whose sessions wait `lockWaitSeconds` for a row lock (MariaDB's default is 50 s). */
  function relayOn(f: OutboxFixture, publisher: Publisher, lockWaitSeconds: number) {
    const pool = mariadbPool(f.url!, 2);
    // Queued on each new connection before the statement it was opened for.
    pool.on('connection', (connection) => {
      void connection.query(`SET SESSION innodb_lock_wait_timeout = ${lockWaitSeconds}`);
    });
    const relay = createOutboxRelay({
      db: mysqlDatabase(pool),
      schema: f.schema,
      publisher,
      notifyChannel: false,
      leaseMs: LEASE_MS,
    });
    return { relay, end: () => pool.end() };
  }

  /** Another session of the test, in a transaction. */
  async function session(f: OutboxFixture): Promise<mysql.Connection> {
    const connection = await sessions.open(f);
    await connection.query('START TRANSACTION');
    return connection;
  }

  const lockRow = (c: mysql.Connection, f: OutboxFixture, id: number) =>
    c.query(`SELECT id FROM ${f.table('outbox_event')} WHERE id = ? FOR UPDATE`, [id]);

  it('a lock-wait timeout (1205) on the SENT mark is retryable: the mark is kept and written once the lock is free; no second publish', async () => {
    const f = (fixture = await openOutbox('mariadb', pgliteOnce()));
    const [a1] = await write(f, ['a']);
    const [row] = await outboxRows(f);
    const holder = await session(f);
    // The row is locked by another transaction between the claim and the confirm.
    const publisher = confirmingAfter(async () => {
      await lockRow(holder, f, row!.id);
    });
    const { relay, end } = relayOn(f, publisher, 1);
    try {
      const failure = await relay.runOnce().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ errno: 1205 });
      expect(classifyError(failure)).toBe('retryable');
      expect((await outboxRows(f)).map((r) => r.status)).toEqual(['PROCESSING']);
      await holder.query('COMMIT');
      // The next round writes the kept mark before it claims.
      expect(await relay.runOnce()).toMatchObject({ claimed: 0 });
      expect((await outboxRows(f)).map((r) => [r.status, r.attempts])).toEqual([['SENT', 1]]);
      expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([a1]);
    } finally {
      await end();
    }
  });

  it('a deadlock (1213) on the SENT marks is retryable: the marks are kept and written after the other transaction commits; no second publish', async () => {
    const f = (fixture = await openOutbox('mariadb', pgliteOnce()));
    const written = await write(f, ['a', 'b']);
    const [a1, b1] = await outboxRows(f);
    const rival = await session(f);
    // Many changed rows make the rival the heavier transaction: InnoDB rolls back the lighter
    // one, the relay's UPDATE.
    await rival.query(`CREATE TABLE ${f.table('ballast')} (n INT PRIMARY KEY)`);
    await rival.query('START TRANSACTION');
    await rival.query(`INSERT INTO ${f.table('ballast')} SELECT seq FROM seq_1_to_2000`);
    // b1 is locked once the relay has claimed it (a claim skips locked rows), before the confirms.
    const publisher = confirmingAfter(async () => {
      await lockRow(rival, f, b1!.id);
    });
    const { relay, end } = relayOn(f, publisher, 30);
    // The relay's UPDATE has locked a1 (first in index order) and waits for b1.
    // (INNODB_TRX does not list an autocommit statement waiting here; the process list does.)
    const waiting = async () => {
      const [rows] = await rival.query(
        `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
         WHERE DB = ? AND INFO LIKE 'UPDATE%SENT%' AND TIME_MS > 200`,
        [f.schema],
      );
      return Number((rows as { n: number | string }[])[0]!.n) > 0;
    };
    try {
      // Both rows are confirmed; their marks go in one UPDATE, which locks a1 and waits for b1.
      const run = relay.runOnce().then(
        () => undefined,
        (error: unknown) => error,
      );
      await until('the relay UPDATE waiting for b1', waiting, 20_000);
      // The rival now waits for a1, which the relay holds: a cycle.
      await lockRow(rival, f, a1!.id);
      const failure = await run;
      expect(failure).toMatchObject({ errno: 1213 });
      expect(classifyError(failure)).toBe('retryable');
      expect(isUnavailableError(failure)).toBe(false);
      expect((await outboxRows(f)).map((r) => r.status)).toEqual(['PROCESSING', 'PROCESSING']);
      await rival.query('COMMIT');
      expect(await relay.runOnce()).toMatchObject({ claimed: 0 });
      expect((await outboxRows(f)).map((r) => [r.status, r.attempts])).toEqual([
        ['SENT', 1],
        ['SENT', 1],
      ]);
      expect(publisher.published.map((m) => m.envelope.messageId).sort()).toEqual(
        [...written].sort(),
      );
    } finally {
      await end();
    }
  });
});
