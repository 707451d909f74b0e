/**
 * The idempotency core on the real databases (PostgreSQL, PGlite, MariaDB): one key → one
 * committed execution, its stored result replayed, another payload refused, a request in flight
 * answered or waited for, a dead execution's key taken over after its lease, retention.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  IDEMPOTENCY_KEY_HEADER,
  findIdempotencyKey,
  idempotencyMigrationSql,
  migrateIdempotency,
  pruneIdempotencyKeys,
  requestEventMessageId,
  runIdempotent,
  writeOutboxEvent,
  type Database,
  type IdempotencyOptions,
} from 'evgen/runtime';
import {
  createOrdersTable,
  DIALECTS,
  openOutbox,
  outboxRows,
  pgliteOnce,
  type OutboxFixture,
} from '../outbox/support/dialects.js';
import { orderPlacedV1 } from '../outbox/support/test-event.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

/** A promise the test resolves by hand, to hold a handler inside its transaction. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

// Generous: PGlite's first start and MariaDB's CREATE DATABASE are slow on a loaded machine.
describe.each(DIALECTS)('runIdempotent on %s', { timeout: 180_000 }, (dialect) => {
  let fixture: OutboxFixture | undefined;
  let orders = '';
  let options: IdempotencyOptions = {};
  const open = async () => {
    const f = (fixture = await openOutbox(dialect, pglite));
    await migrateIdempotency(f.db, { schema: f.schema });
    await migrateIdempotency(f.db, { schema: f.schema }); // re-running is a no-op
    orders = await createOrdersTable(f);
    options = { schema: f.schema };
    return f;
  };
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  /** The handler of POST /orders: a business row and its event, in the request's transaction. */
  const placeOrder =
    (f: OutboxFixture, orderId: string, calls: { n: number }) =>
    async (tx: Parameters<Parameters<typeof runIdempotent>[2]>[0]) => {
      calls.n++;
      await tx.query(f.sql(`INSERT INTO ${orders} (order_id, amount) VALUES ($1, $2)`), [
        orderId,
        5,
      ]);
      const event = await writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId, amount: 5 },
        {},
        { schema: f.schema },
      );
      return { status: 201, orderId, messageId: event.messageId };
    };
  const count = async (db: Database, table: string) =>
    Number(
      (await db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`)).rows[0]!.n,
    );

  it('executes once and replays the stored result for the same key and request', async () => {
    const f = await open();
    const calls = { n: 0 };
    const request = { key: 'req-abc-123', fingerprint: 'fp-1' };
    const first = await runIdempotent(f.db, request, placeOrder(f, 'o-1', calls), options);
    const second = await runIdempotent(f.db, request, placeOrder(f, 'o-2', calls), options);
    expect(first).toMatchObject({ kind: 'fresh', stored: true });
    expect(second).toEqual({ kind: 'replayed', result: (first as { result: unknown }).result });
    expect(calls.n).toBe(1);
    expect(await count(f.db, orders)).toBe(1);
    const rows = await outboxRows(f);
    expect(rows.map((row) => row.event_id)).toEqual([
      requestEventMessageId('req-abc-123', 'fp-1', 0),
    ]);
    const record = await findIdempotencyKey(f.db, 'req-abc-123', options);
    expect(record).toMatchObject({ status: 'COMPLETED', attempts: 1, requestHash: 'fp-1' });
    expect(JSON.parse(record!.response!)).toEqual((first as { result: unknown }).result);
  });

  it('refuses the key with another fingerprint and writes nothing', async () => {
    const f = await open();
    const calls = { n: 0 };
    await runIdempotent(
      f.db,
      { key: 'k', fingerprint: 'fp-1' },
      placeOrder(f, 'o-1', calls),
      options,
    );
    const other = await runIdempotent(
      f.db,
      { key: 'k', fingerprint: 'fp-2' },
      placeOrder(f, 'o-2', calls),
      options,
    );
    expect(other).toEqual({ kind: 'conflict' });
    expect(calls.n).toBe(1);
    expect(await count(f.db, orders)).toBe(1);
    expect(await outboxRows(f)).toHaveLength(1);
  });

  it('two keys are two intents', async () => {
    const f = await open();
    const calls = { n: 0 };
    await runIdempotent(
      f.db,
      { key: 'k-1', fingerprint: 'fp' },
      placeOrder(f, 'o-1', calls),
      options,
    );
    await runIdempotent(
      f.db,
      { key: 'k-2', fingerprint: 'fp' },
      placeOrder(f, 'o-2', calls),
      options,
    );
    expect(calls.n).toBe(2);
    expect(await count(f.db, orders)).toBe(2);
    const ids = (await outboxRows(f)).map((row) => row.event_id);
    expect(new Set(ids).size).toBe(2);
  });

  it('a failing handler leaves nothing behind and the retry executes', async () => {
    const f = await open();
    const calls = { n: 0 };
    const request = { key: 'k', fingerprint: 'fp' };
    await expect(
      runIdempotent(
        f.db,
        request,
        async (tx, context) => {
          await placeOrder(f, 'o-1', calls)(tx);
          expect(context.attempt).toBe(1);
          throw new Error('payment declined after the write');
        },
        options,
      ),
    ).rejects.toThrow('payment declined');
    expect(await count(f.db, orders)).toBe(0);
    expect(await outboxRows(f)).toHaveLength(0);
    expect(await findIdempotencyKey(f.db, 'k', options)).toBeUndefined();
    const retry = await runIdempotent(f.db, request, placeOrder(f, 'o-1', calls), options);
    expect(retry).toMatchObject({ kind: 'fresh', stored: true });
    expect(await count(f.db, orders)).toBe(1);
  });

  it('a result not to be stored is rolled back and the key released', async () => {
    const f = await open();
    const calls = { n: 0 };
    const outcome = await runIdempotent(
      f.db,
      { key: 'k', fingerprint: 'fp' },
      placeOrder(f, 'o-1', calls),
      {
        ...options,
        shouldStore: () => false,
      },
    );
    expect(outcome).toMatchObject({ kind: 'fresh', stored: false, result: { orderId: 'o-1' } });
    expect(await count(f.db, orders)).toBe(0);
    expect(await outboxRows(f)).toHaveLength(0);
    expect(await findIdempotencyKey(f.db, 'k', options)).toBeUndefined();
  });

  it('events of one request carry the key and messageIds from key, fingerprint and position', async () => {
    const f = await open();
    const outcome = await runIdempotent(
      f.db,
      { key: 'k', fingerprint: 'fp' },
      async (tx) => {
        const a = await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'o-1', amount: 1 },
          {},
          { schema: f.schema },
        );
        const b = await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'o-1', amount: 2 },
          { headers: { x: 'y' } },
          { schema: f.schema },
        );
        return [a.messageId, b.messageId];
      },
      options,
    );
    const expected = [0, 1].map((position) => requestEventMessageId('k', 'fp', position));
    expect(outcome).toMatchObject({ kind: 'fresh', result: expected });
    expect(new Set(expected).size).toBe(2);
    const headers = await f.db.query<{ headers: unknown }>(
      `SELECT headers FROM ${f.table('outbox_event')} ORDER BY id`,
    );
    const parsed = headers.rows.map((row) =>
      typeof row.headers === 'string' ? JSON.parse(row.headers) : row.headers,
    );
    expect(parsed[0]).toMatchObject({ [IDEMPOTENCY_KEY_HEADER]: 'k' });
    expect(parsed[1]).toMatchObject({ [IDEMPOTENCY_KEY_HEADER]: 'k', x: 'y' });
    // Outside a request the writer mints its own ids as before.
    const plain = await f.db.transaction((tx) =>
      writeOutboxEvent(tx, orderPlacedV1, { orderId: 'o-2', amount: 1 }, {}, { schema: f.schema }),
    );
    expect(expected).not.toContain(plain.messageId);
  });

  it("takes over a dead execution's key after its lease, executing once", async () => {
    const f = await open();
    const calls = { n: 0 };
    const request = { key: 'k', fingerprint: 'fp' };
    // What a process that claimed the key and died before its commit leaves: the claim alone.
    const table = f.table('idempotency_key');
    await f.db.query(
      dialect === 'mariadb'
        ? `INSERT INTO ${table} (idempotency_key, request_hash, status, lease_token, locked_until, attempts, created_at)
           VALUES ('k', 'fp', 'IN_PROGRESS', UUID(), UTC_TIMESTAMP(3) + INTERVAL 400000 MICROSECOND, 1, UTC_TIMESTAMP(3))`
        : `INSERT INTO ${table} (idempotency_key, request_hash, status, lease_token, locked_until)
           VALUES ('k', 'fp', 'IN_PROGRESS', gen_random_uuid(), now() + interval '400 milliseconds')`,
    );
    expect(await runIdempotent(f.db, request, placeOrder(f, 'o-1', calls), options)).toEqual({
      kind: 'in-progress',
    });
    expect(calls.n).toBe(0);
    let attempt = 0;
    const after = await runIdempotent(
      f.db,
      request,
      async (tx, context) => {
        attempt = context.attempt;
        return placeOrder(f, 'o-1', calls)(tx);
      },
      { ...options, waitMs: 10_000 },
    );
    expect(after).toMatchObject({ kind: 'fresh', stored: true });
    expect(attempt).toBe(2);
    expect(calls.n).toBe(1);
    expect(await runIdempotent(f.db, request, placeOrder(f, 'o-1', calls), options)).toMatchObject({
      kind: 'replayed',
    });
    expect(await count(f.db, orders)).toBe(1);
    expect(await outboxRows(f)).toHaveLength(1);
  });

  it('concurrent requests with one key: one execution, the others get its stored result', async () => {
    const f = await open();
    const calls = { n: 0 };
    const db = dialect === 'pglite' ? f.db : f.openAnother(12);
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, () =>
        runIdempotent(db, { key: 'k', fingerprint: 'fp' }, placeOrder(f, 'o-1', calls), {
          ...options,
          waitMs: 30_000,
        }),
      ),
    );
    expect(outcomes.filter((o) => o.kind === 'fresh')).toHaveLength(1);
    const replayed = outcomes.filter((o) => o.kind === 'replayed');
    expect(replayed).toHaveLength(11);
    const fresh = outcomes.find((o) => o.kind === 'fresh') as { result: unknown };
    for (const o of replayed) expect(o).toEqual({ kind: 'replayed', result: fresh.result });
    expect(calls.n).toBe(1);
    expect(await count(f.db, orders)).toBe(1);
    expect(await outboxRows(f)).toHaveLength(1);
  }, 60_000);

  it.skipIf(dialect === 'pglite')(
    'a live execution past its lease is not taken over: in progress until it commits',
    async () => {
      const f = await open();
      const calls = { n: 0 };
      const request = { key: 'k', fingerprint: 'fp' };
      const held = gate();
      const slow = runIdempotent(
        f.db,
        request,
        async (tx) => {
          const result = await placeOrder(f, 'o-1', calls)(tx);
          await held.promise;
          return result;
        },
        { ...options, leaseMs: 100 },
      );
      await expect.poll(() => calls.n).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const other = f.openAnother(2);
      expect(await runIdempotent(other, request, placeOrder(f, 'o-2', calls), options)).toEqual({
        kind: 'in-progress',
      });
      held.open();
      expect(await slow).toMatchObject({ kind: 'fresh', stored: true });
      expect(
        await runIdempotent(other, request, placeOrder(f, 'o-2', calls), options),
      ).toMatchObject({
        kind: 'replayed',
        result: { orderId: 'o-1' },
      });
      expect(calls.n).toBe(1);
      expect(await count(f.db, orders)).toBe(1);
    },
  );

  it('retention deletes completed keys and expired claims, never a live one', async () => {
    const f = await open();
    const calls = { n: 0 };
    await runIdempotent(
      f.db,
      { key: 'done', fingerprint: 'fp' },
      placeOrder(f, 'o-1', calls),
      options,
    );
    const table = f.table('idempotency_key');
    await f.db.query(
      dialect === 'mariadb'
        ? `INSERT INTO ${table} (idempotency_key, request_hash, status, lease_token, locked_until, attempts, created_at)
           VALUES ('live', 'fp', 'IN_PROGRESS', UUID(), UTC_TIMESTAMP(3) + INTERVAL 1 HOUR, 1, UTC_TIMESTAMP(3)),
                  ('dead', 'fp', 'IN_PROGRESS', UUID(), UTC_TIMESTAMP(3) - INTERVAL 1 SECOND, 1, UTC_TIMESTAMP(3))`
        : `INSERT INTO ${table} (idempotency_key, request_hash, status, lease_token, locked_until)
           VALUES ('live', 'fp', 'IN_PROGRESS', gen_random_uuid(), now() + interval '1 hour'),
                  ('dead', 'fp', 'IN_PROGRESS', gen_random_uuid(), now() - interval '1 second')`,
    );
    // Not yet older than the retention: nothing goes.
    expect(await pruneIdempotencyKeys(f.db, { ...options, olderThanMs: 60_000 })).toBe(0);
    const later = new Date(Date.now() + 120_000);
    expect(
      await pruneIdempotencyKeys(f.db, {
        ...options,
        olderThanMs: 60_000,
        now: later,
        batchSize: 1,
      }),
    ).toBe(2);
    expect(await findIdempotencyKey(f.db, 'live', options)).toMatchObject({
      status: 'IN_PROGRESS',
    });
    expect(await findIdempotencyKey(f.db, 'done', options)).toBeUndefined();
  });

  it('the migration script (as generated for migration tools) makes a working table', async () => {
    const f = await open();
    const scripted = { schema: f.schema, table: 'idem_from_script' };
    const script = idempotencyMigrationSql(scripted, f.db.dialect);
    for (const statement of script.split(';\n').filter((text) => text.trim() !== ''))
      await f.db.query(statement);
    const calls = { n: 0 };
    const request = { key: 'k', fingerprint: 'fp' };
    await runIdempotent(f.db, request, placeOrder(f, 'o-1', calls), scripted);
    expect(await runIdempotent(f.db, request, placeOrder(f, 'o-1', calls), scripted)).toMatchObject(
      {
        kind: 'replayed',
      },
    );
    expect(calls.n).toBe(1);
  });
});
