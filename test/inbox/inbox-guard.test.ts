/**
 * The inbox guard and the ordering helpers on the real PostgreSQL, PGlite and MariaDB: one business
 * effect per (message, consumer), rollback of the inbox row on failure, concurrent delivery,
 * stale and out-of-order events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AggregateVersionGapError,
  findInboxEntries,
  handleWithInbox,
  inboxMigrationSql,
  InboxHandlerError,
  migrateInbox,
  pruneInbox,
  NonRetryableError,
  newMessageId,
  RetryableError,
  type Database,
  type Envelope,
  type Transaction,
} from 'evgen/runtime';
import { MYSQL_DIALECT } from '../../src/runtime/db/sql-dialect.js';
import { applyInOrder, checkOrder, markApplied } from '../../src/runtime/inbox/aggregate-order.js';
import { handleBatchWithInbox } from '../../src/runtime/inbox/inbox-batch.js';
import { mysqlTimestamp } from '../../src/runtime/db/sql-timestamp.js';
import {
  BACKENDS,
  countRows,
  createEffectsTable,
  openBackend,
  type Backend,
} from './support/backends.js';
import { sentV1 } from './support/test-events.js';

const backends: Record<Backend['kind'], Backend> = {} as Record<Backend['kind'], Backend>;

beforeAll(async () => {
  const opened = await Promise.all(BACKENDS.map(openBackend));
  for (const backend of opened) backends[backend.kind] = backend;
  await Promise.all(Object.values(backends).map((b) => migrateInbox(b.db, { schema: b.schema })));
});
afterAll(async () => {
  await Promise.all(Object.values(backends).map((b) => b?.close()));
});

function recordEffect(effects: string, consumer: string) {
  return async (tx: Transaction, envelope: Envelope) => {
    const param = tx.dialect?.param ?? ((index: number) => `$${index}`);
    await tx.query(
      `INSERT INTO ${effects} (message_id, consumer) VALUES (${param(1)}, ${param(2)})`,
      [envelope.messageId, consumer],
    );
  };
}

function inboxRows(backend: Backend, messageId: string): Promise<number> {
  return countRows(backend.db, backend.table('inbox_message'), 'message_id = $1', [messageId]);
}

describe('migration', () => {
  it('renders quoted, schema-qualified DDL and refuses unsafe names', () => {
    const sql = inboxMigrationSql({ schema: 'app', table: 'inbox' });
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "app"."inbox"');
    expect(sql).toContain('PRIMARY KEY (message_id, consumer)');
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS "app"."inbox_aggregate_version"');
    expect(() => inboxMigrationSql({ table: 'inbox; DROP TABLE x' })).toThrow(
      /invalid SQL identifier/,
    );
  });

  it('renders MySQL/MariaDB DDL with backquotes, VARCHAR keys and a binary collation', () => {
    const sql = inboxMigrationSql({ schema: 'app', table: 'inbox' }, MYSQL_DIALECT);
    expect(sql).toContain('CREATE TABLE IF NOT EXISTS `app`.`inbox`');
    expect(sql).toContain('message_id VARCHAR(255) NOT NULL');
    expect(sql).toContain('COLLATE=utf8mb4_bin');
    expect(sql).not.toContain('"');
  });

  it.each(BACKENDS)('is idempotent on %s', async (kind) => {
    const backend = backends[kind];
    const options = { schema: backend.schema, table: backend.unique('inbox') };
    await migrateInbox(backend.db, options);
    await migrateInbox(backend.db, options);
    expect(await countRows(backend.db, backend.table(options.table))).toBe(0);
  });

  it.each(['postgres', 'mariadb'] as const)(
    'is safe when several processes migrate at once (%s)',
    async (kind) => {
      const backend = backends[kind];
      const options = {
        schema: backend.schema,
        table: backend.unique('inbox'),
        orderingTable: backend.unique('order'),
      };
      await Promise.all(
        [backend.db, backend.otherDb!, backend.db, backend.otherDb!].map((db) =>
          migrateInbox(db, options),
        ),
      );
      expect(await countRows(backend.db, backend.table(options.orderingTable))).toBe(0);
    },
  );
});

describe.each(BACKENDS)('inbox guard on %s', (kind) => {
  const backend = () => backends[kind];

  it('handles a message once: the redelivery is a duplicate and has no second effect', async () => {
    const b = backend();
    const effects = await createEffectsTable(b);
    const envelope = sentV1();
    const options = { schema: b.schema, consumer: 'billing', envelope };
    expect(await handleWithInbox(b.db, options, recordEffect(effects, 'billing'))).toBe('handled');
    let calls = 0;
    const second = await handleWithInbox(b.db, options, async (tx, env) => {
      calls += 1;
      await recordEffect(effects, 'billing')(tx, env);
    });
    expect(second).toBe('duplicate');
    expect(calls).toBe(0);
    expect(await countRows(b.db, effects)).toBe(1);
    const row = await b.db.query<{ processed: boolean | number }>(
      b.sql(
        `SELECT processed_at IS NOT NULL AND processed_at >= received_at AS processed FROM ${b.table('inbox_message')} WHERE message_id = $1`,
      ),
      [envelope.messageId],
    );
    expect(row.rows.map((r) => Boolean(Number(r.processed)))).toEqual([true]);
  });

  it('a failing handler leaves neither the inbox row nor its writes, and the redelivery succeeds', async () => {
    const b = backend();
    const effects = await createEffectsTable(b);
    const envelope = sentV1();
    const options = { schema: b.schema, consumer: 'billing', envelope };
    const failure = await handleWithInbox(b.db, options, async (tx, env) => {
      await recordEffect(effects, 'billing')(tx, env);
      throw new RetryableError('payment provider timed out');
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InboxHandlerError);
    expect((failure as InboxHandlerError).retryable).toBe(true);
    expect((failure as InboxHandlerError).cause).toBeInstanceOf(RetryableError);
    expect((failure as InboxHandlerError).message).toContain(envelope.messageId);
    expect(await inboxRows(b, envelope.messageId)).toBe(0);
    expect(await countRows(b.db, effects)).toBe(0);

    expect(await handleWithInbox(b.db, options, recordEffect(effects, 'billing'))).toBe('handled');
    expect(await countRows(b.db, effects)).toBe(1);
    expect(await inboxRows(b, envelope.messageId)).toBe(1);
  });

  it('classifies failures: evgen errors by their flag, SQL errors by SQLSTATE', async () => {
    const b = backend();
    const options = { schema: b.schema, consumer: 'billing', envelope: sentV1() };
    const permanent = await handleWithInbox(b.db, options, async () => {
      throw new NonRetryableError('order is already closed');
    }).then(
      () => expect.unreachable('should have failed'),
      (error: unknown) => error as InboxHandlerError,
    );
    expect(permanent.retryable).toBe(false);
    expect(permanent.causeType).toBe('NonRetryableError');
    // A deterministic SQL error: division by zero (22012); MariaDB answers NULL to 1/0, so an
    // unknown column (42S22) there.
    const constraint = await handleWithInbox(b.db, options, async (tx) => {
      await tx.query(kind === 'mariadb' ? 'SELECT no_such_column FROM DUAL' : 'SELECT 1/0');
    }).then(
      () => expect.unreachable('should have failed'),
      (error: unknown) => error as InboxHandlerError,
    );
    expect(constraint).toBeInstanceOf(InboxHandlerError);
    expect(constraint.retryable).toBe(false); // a deterministic SQL error
    expect(await inboxRows(b, options.envelope.messageId)).toBe(0);
  });

  it('two consumers with different names each handle the same message once', async () => {
    const b = backend();
    const effects = await createEffectsTable(b);
    const envelope = sentV1();
    for (const consumer of ['inventory', 'payment', 'inventory', 'payment']) {
      await handleWithInbox(
        b.db,
        { schema: b.schema, consumer, envelope },
        recordEffect(effects, consumer),
      );
    }
    expect(await countRows(b.db, effects, 'consumer = $1', ['inventory'])).toBe(1);
    expect(await countRows(b.db, effects, 'consumer = $1', ['payment'])).toBe(1);
    expect(await inboxRows(b, envelope.messageId)).toBe(2);
  });

  it('findInboxEntries says which consumers took a message and when they committed it', async () => {
    const b = backend();
    const envelope = sentV1();
    expect(await findInboxEntries(b.db, envelope.messageId, { schema: b.schema })).toEqual([]);
    for (const consumer of ['payment', 'inventory']) {
      await handleWithInbox(b.db, { schema: b.schema, consumer, envelope }, async () => undefined);
    }
    // A failed attempt leaves nothing behind, so it is not reported as taken.
    await handleWithInbox(b.db, { schema: b.schema, consumer: 'shipping', envelope }, async () => {
      throw new RetryableError('down');
    }).catch(() => undefined);
    const entries = await findInboxEntries(b.db, envelope.messageId, { schema: b.schema });
    expect(entries.map((e) => e.consumer)).toEqual(['inventory', 'payment']);
    for (const entry of entries) {
      expect(entry.messageId).toBe(envelope.messageId);
      expect(entry.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(entry.processedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
    await expect(
      findInboxEntries(b.db, envelope.messageId, { table: 'x; DROP TABLE y' }),
    ).rejects.toThrow(/invalid SQL identifier/);
  });
});

describe.each(BACKENDS)('batched inbox on %s', (kind) => {
  it('one transaction, a savepoint per message: a failure undoes only its own message', async () => {
    const b = backends[kind];
    const effects = await createEffectsTable(b);
    const [earlier, good, bad] = [sentV1(), sentV1(), sentV1()];
    await handleWithInbox(
      b.db,
      { schema: b.schema, consumer: 'billing', envelope: earlier },
      recordEffect(effects, 'billing'),
    );
    const results = await handleBatchWithInbox(
      b.db,
      { schema: b.schema, consumer: 'billing', envelopes: [good, bad, good, earlier] },
      async (tx, envelope) => {
        await recordEffect(effects, 'billing')(tx, envelope);
        if (envelope === bad) throw new RetryableError('lock timeout');
      },
    );
    expect(results.map((r) => [r.messageId, r.outcome])).toEqual([
      [good.messageId, 'handled'],
      [bad.messageId, 'failed'],
      [good.messageId, 'duplicate'],
      [earlier.messageId, 'duplicate'],
    ]);
    const failed = results[1]!;
    expect(failed.outcome === 'failed' && failed.error.retryable).toBe(true);
    expect(await countRows(b.db, effects, 'message_id = $1', [good.messageId])).toBe(1);
    expect(await countRows(b.db, effects, 'message_id = $1', [bad.messageId])).toBe(0);
    expect(await inboxRows(b, bad.messageId)).toBe(0);
    expect(await inboxRows(b, good.messageId)).toBe(1);
    // The failed message succeeds when it comes again.
    expect(
      await handleWithInbox(
        b.db,
        { schema: b.schema, consumer: 'billing', envelope: bad },
        recordEffect(effects, 'billing'),
      ),
    ).toBe('handled');
    expect(
      await handleBatchWithInbox(
        b.db,
        { schema: b.schema, consumer: 'billing', envelopes: [] },
        async () => undefined,
      ),
    ).toEqual([]);
  });
});

describe.each(BACKENDS)('inbox retention on %s', (kind) => {
  it('pruneInbox deletes processed rows older than the cut-off, in batches, and nothing else', async () => {
    const b = backends[kind];
    const options = { schema: b.schema, table: b.unique('inbox') };
    await migrateInbox(b.db, options);
    const table = b.table(options.table);
    const oldDate = new Date(Date.now() - 30 * 86_400_000);
    const old = kind === 'mariadb' ? mysqlTimestamp(oldDate) : oldDate.toISOString();
    for (let i = 0; i < 5; i++) {
      await b.db.query(
        b.sql(
          `INSERT INTO ${table} (message_id, consumer, received_at, processed_at) VALUES ($1, 'c', $2, $3)`,
        ),
        [`old-${i}`, old, old],
      );
    }
    await b.db.query(
      b.sql(
        `INSERT INTO ${table} (message_id, consumer, received_at) VALUES ('old-unprocessed', 'c', $1)`,
      ),
      [old],
    );
    const now = kind === 'mariadb' ? 'UTC_TIMESTAMP(3)' : 'now()';
    await b.db.query(
      `INSERT INTO ${table} (message_id, consumer, received_at, processed_at) VALUES ('recent', 'c', ${now}, ${now})`,
    );
    const deleted = await pruneInbox(b.db, {
      ...options,
      olderThan: new Date(Date.now() - 7 * 86_400_000),
      batchSize: 2,
    });
    expect(deleted).toBe(5);
    const left = await b.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${table} ORDER BY message_id`,
    );
    expect(left.rows.map((r) => r.message_id)).toEqual(['old-unprocessed', 'recent']);
  });
});

/**
 * Waits until a session on the test schema is blocked on a lock (the concurrent delivery).
 * MariaDB 10.11 does not list that session in INNODB_TRX as 'LOCK WAIT' (measured: only the
 * holder shows, RUNNING), so there a statement of another connection still executing against the
 * test schema is the waiter: the holder sits idle inside its gate, and nothing else touches the schema.
 */
async function waitForLockWait(db: Database, needle: string): Promise<void> {
  for (let attempt = 0; attempt < 3_000; attempt += 1) {
    const waiting = await db.query<{ n: number | string }>(
      db.dialect.name === 'mysql'
        ? `SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE COMMAND = 'Query' AND ID <> CONNECTION_ID() AND INFO LIKE CONCAT('%', ?, '%') AND INFO NOT LIKE '%information_schema%'`
        : `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
      [needle],
    );
    if (Number(waiting.rows[0]!.n) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the concurrent delivery never blocked on the inbox row');
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let entered!: () => void;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  return { open, opened, entered, reached };
}

describe.each(['postgres', 'mariadb'] as const)(
  'concurrent delivery on two connections (%s)',
  (kind) => {
    it('one delivery handles, the other waits on the row lock and then sees a duplicate', async () => {
      const b = backends[kind];
      const effects = await createEffectsTable(b);
      const envelope = sentV1();
      const options = { schema: b.schema, consumer: 'billing', envelope };
      const first = gate();
      const a = handleWithInbox(b.db, options, async (tx, env) => {
        await recordEffect(effects, 'billing')(tx, env);
        first.entered();
        await first.opened;
      });
      await first.reached;
      let secondRan = false;
      const second = handleWithInbox(b.otherDb!, options, async (tx, env) => {
        secondRan = true;
        await recordEffect(effects, 'billing')(tx, env);
      });
      await waitForLockWait(b.db, b.schema);
      first.open();
      expect(await a).toBe('handled');
      expect(await second).toBe('duplicate');
      expect(secondRan).toBe(false);
      expect(await countRows(b.db, effects)).toBe(1);
    });

    it('when the first delivery fails, the waiting one handles the message', async () => {
      const b = backends[kind];
      const effects = await createEffectsTable(b);
      const envelope = sentV1();
      const options = { schema: b.schema, consumer: 'billing', envelope };
      const first = gate();
      const a = handleWithInbox(b.db, options, async () => {
        first.entered();
        await first.opened;
        throw new RetryableError('deadlock victim');
      }).catch((error: unknown) => error);
      await first.reached;
      const second = handleWithInbox(b.otherDb!, options, recordEffect(effects, 'billing'));
      await waitForLockWait(b.db, b.schema);
      first.open();
      expect(await a).toBeInstanceOf(InboxHandlerError);
      expect(await second).toBe('handled');
      expect(await countRows(b.db, effects)).toBe(1);
    });
  },
);

describe.each(BACKENDS)('ordering helpers on %s', (kind) => {
  const backend = () => backends[kind];
  const key = (b: Backend, aggregateId: string, version: number) => ({
    schema: b.schema,
    consumer: 'projector',
    aggregateType: 'Parcel',
    aggregateId,
    version,
  });

  it('says next, stale or gap against the last applied version', async () => {
    const b = backend();
    const id = newMessageId();
    await b.db.transaction(async (tx) => {
      expect(await checkOrder(tx, key(b, id, 2))).toBe('gap');
      expect(await checkOrder(tx, key(b, id, 1))).toBe('next');
      await markApplied(tx, key(b, id, 1));
      expect(await checkOrder(tx, key(b, id, 1))).toBe('stale');
      expect(await checkOrder(tx, key(b, id, 2))).toBe('next');
      expect(await checkOrder(tx, key(b, id, 4))).toBe('gap');
      await markApplied(tx, key(b, id, 3));
      await markApplied(tx, key(b, id, 2)); // never moves backwards
      expect(await checkOrder(tx, key(b, id, 3))).toBe('stale');
      expect(await checkOrder(tx, key(b, id, 4))).toBe('next');
    });
    // Another consumer and another aggregate have their own positions.
    await b.db.transaction(async (tx) => {
      expect(await checkOrder(tx, { ...key(b, id, 1), consumer: 'auditor' })).toBe('next');
      expect(await checkOrder(tx, key(b, newMessageId(), 1))).toBe('next');
      expect(await checkOrder(tx, { ...key(b, newMessageId(), 7), acceptFirstSeen: true })).toBe(
        'next',
      );
    });
    // A state projection may skip versions, but never goes back.
    const projected = newMessageId();
    await b.db.transaction(async (tx) => {
      const k = (version: number) => ({
        ...key(b, projected, version),
        consumer: 'search-index',
        allowGaps: true,
      });
      expect(await checkOrder(tx, k(3))).toBe('next');
      await markApplied(tx, k(3));
      expect(await checkOrder(tx, k(2))).toBe('stale');
      expect(await checkOrder(tx, k(3))).toBe('stale');
      expect(await checkOrder(tx, k(9))).toBe('next');
    });
  });

  it('applyInOrder applies the next version, skips stale ones and throws a retryable error on a gap', async () => {
    const b = backend();
    const effects = await createEffectsTable(b);
    const id = newMessageId();
    const apply = (version: number) =>
      b.db.transaction((tx) =>
        applyInOrder(tx, key(b, id, version), async () => {
          await tx.query(
            b.sql(`INSERT INTO ${effects} (message_id, consumer) VALUES ($1, 'projector')`),
            [`v${version}`],
          );
        }),
      );
    expect(await apply(1)).toBe('applied');
    const gap = await apply(3).catch((error: unknown) => error);
    expect(gap).toBeInstanceOf(AggregateVersionGapError);
    expect(gap).toMatchObject({ retryable: true, expected: 2, received: 3 });
    expect(await apply(2)).toBe('applied');
    expect(await apply(2)).toBe('stale');
    expect(await apply(3)).toBe('applied');
    const applied = await b.db.query<{ message_id: string }>(
      `SELECT message_id FROM ${effects} ORDER BY id`,
    );
    expect(applied.rows.map((r) => r.message_id)).toEqual(['v1', 'v2', 'v3']);
  });

  it('a gap inside the guard rolls back the inbox row, so the message is handled when it comes again', async () => {
    const b = backend();
    const id = newMessageId();
    const early = sentV1(id, 2);
    const handler = async (tx: Transaction, env: Envelope) => {
      await applyInOrder(tx, key(b, env.aggregateId, env.aggregateVersion!), async () => undefined);
    };
    const options = { schema: b.schema, consumer: 'projector' };
    const failure = await handleWithInbox(b.db, { ...options, envelope: early }, handler).catch(
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ retryable: true });
    expect((failure as InboxHandlerError).cause).toBeInstanceOf(AggregateVersionGapError);
    expect(await inboxRows(b, early.messageId)).toBe(0);
    expect(await handleWithInbox(b.db, { ...options, envelope: sentV1(id, 1) }, handler)).toBe(
      'handled',
    );
    expect(await handleWithInbox(b.db, { ...options, envelope: early }, handler)).toBe('handled');
  });
});

describe.each(['postgres', 'mariadb'] as const)('ordering under concurrency (%s)', (kind) => {
  it('two transactions applying the same version: one applies, the other waits and sees stale', async () => {
    const b = backends[kind];
    const id = newMessageId();
    const k = {
      schema: b.schema,
      consumer: 'projector',
      aggregateType: 'Parcel',
      aggregateId: id,
      version: 1,
    };
    const first = gate();
    const a = b.db.transaction((tx) =>
      applyInOrder(tx, k, async () => {
        first.entered();
        await first.opened;
      }),
    );
    await first.reached;
    const second = b.otherDb!.transaction((tx) => applyInOrder(tx, k, async () => undefined));
    await waitForLockWait(b.db, b.schema);
    first.open();
    expect(await a).toBe('applied');
    expect(await second).toBe('stale');
  });
});

describe('duplicate detection on MariaDB: only the duplicate key means "already handled"', () => {
  it('a duplicate is reported as such; any other insert error fails the delivery instead of passing as new', async () => {
    const b = backends.mariadb;
    const effects = await createEffectsTable(b);
    const envelope = sentV1();
    const options = { schema: b.schema, consumer: 'billing', envelope };
    expect(await handleWithInbox(b.db, options, recordEffect(effects, 'billing'))).toBe('handled');
    expect(await handleWithInbox(b.db, options, recordEffect(effects, 'billing'))).toBe(
      'duplicate',
    );
    // A consumer name longer than the key column: an error, not a handled message.
    const tooLong = 'c'.repeat(300);
    const failure = await handleWithInbox(
      b.db,
      { ...options, consumer: tooLong },
      recordEffect(effects, tooLong),
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InboxHandlerError);
    expect((failure as InboxHandlerError).cause).toMatchObject({ errno: 1406 });
    expect(await countRows(b.db, effects)).toBe(1);
    // What INSERT IGNORE would have done with that row: a warning, a truncated consumer name and
    // an affected-row count of 1, i.e. "new message" for a consumer that does not exist.
    const table = b.table('inbox_message');
    const ignored = await b.db.query(
      `INSERT IGNORE INTO ${table} (message_id, consumer, received_at) VALUES (?, ?, UTC_TIMESTAMP(3))`,
      [envelope.messageId, tooLong],
    );
    expect(ignored.rowCount).toBe(1);
    // And ON DUPLICATE KEY UPDATE's count for a duplicate depends on the client flags: mysql2
    // sets CLIENT_FOUND_ROWS, so a no-op update of a duplicate counts 1, like an insert.
    const upserted = await b.db.query(
      `INSERT INTO ${table} (message_id, consumer, received_at) VALUES (?, ?, UTC_TIMESTAMP(3))
       ON DUPLICATE KEY UPDATE consumer = consumer`,
      [envelope.messageId, 'billing'],
    );
    expect(upserted.rowCount).toBe(1);
  });

  it('a real deadlock between two deliveries (1213) is retryable, not poison; the survivor commits', async () => {
    const b = backends.mariadb;
    const rows = b.table(b.unique('stock'));
    await b.db.query(`CREATE TABLE ${rows} (sku VARCHAR(10) PRIMARY KEY, n INT NOT NULL)`);
    await b.db.query(`INSERT INTO ${rows} VALUES ('a', 0), ('b', 0)`);
    const firstLocked = gate();
    const secondLocked = gate();
    // Each delivery locks one row, waits for the other to lock the other row, then wants it.
    const deliver = (
      db: Database,
      mine: string,
      theirs: string,
      own: ReturnType<typeof gate>,
      other: ReturnType<typeof gate>,
    ) =>
      handleWithInbox(
        db,
        { schema: b.schema, consumer: 'stock', envelope: sentV1() },
        async (tx) => {
          await tx.query(`UPDATE ${rows} SET n = n + 1 WHERE sku = ?`, [mine]);
          own.entered();
          await other.reached;
          await tx.query(`UPDATE ${rows} SET n = n + 1 WHERE sku = ?`, [theirs]);
        },
      ).then(
        () => 'handled' as const,
        (error: unknown) => error as InboxHandlerError,
      );
    const outcomes = await Promise.all([
      deliver(b.db, 'a', 'b', firstLocked, secondLocked),
      deliver(b.otherDb!, 'b', 'a', secondLocked, firstLocked),
    ]);
    const failed = outcomes.filter((o): o is InboxHandlerError => o !== 'handled');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.cause).toMatchObject({ errno: 1213 });
    expect(failed[0]!.retryable).toBe(true);
    // The victim's writes and inbox row are gone; the survivor's are committed.
    const stock = await b.db.query<{ n: number }>(`SELECT n FROM ${rows} ORDER BY sku`);
    expect(stock.rows.map((r) => Number(r.n))).toEqual([1, 1]);
  });

  it('a lock-wait timeout (1205) is retryable, not poison', async () => {
    const b = backends.mariadb;
    const rows = b.table(b.unique('held'));
    await b.db.query(`CREATE TABLE ${rows} (sku VARCHAR(10) PRIMARY KEY, n INT NOT NULL)`);
    await b.db.query(`INSERT INTO ${rows} VALUES ('a', 0)`);
    const holder = gate();
    const holding = b.db.transaction(async (tx) => {
      await tx.query(`UPDATE ${rows} SET n = n + 1 WHERE sku = 'a'`);
      holder.entered();
      await holder.opened;
    });
    await holder.reached;
    const failure = await handleWithInbox(
      b.otherDb!,
      { schema: b.schema, consumer: 'stock', envelope: sentV1() },
      async (tx) => {
        await tx.query('SET SESSION innodb_lock_wait_timeout = 1');
        await tx.query(`UPDATE ${rows} SET n = n + 1 WHERE sku = 'a'`);
      },
    ).then(
      () => expect.unreachable('the update should have timed out waiting for the lock'),
      (error: unknown) => error as InboxHandlerError,
    );
    holder.open();
    await holding;
    expect(failure.cause).toMatchObject({ errno: 1205 });
    expect(failure.retryable).toBe(true);
  });
});
