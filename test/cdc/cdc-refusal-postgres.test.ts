/**
 * The CDC outbox deletes its rows in the transaction that writes them: an event exists only in
 * the WAL, and only a logical replication slot decodes it. So on PostgreSQL the CDC outbox
 * refuses (migration and every write) a server where no connector would read it:
 * - `wal_level = replica` (a private server set up so): migration refused naming wal_level, and
 *   with `connectorLater` every write refused, the business transaction rolled back;
 * - `wal_level = logical` without the connector's slot, then without its publication: refused,
 *   naming the slot, then the publication; once both exist the write is accepted and decoded
 *   from the slot; a slot dropped later is refused again at the next write.
 * `evgen outbox status --cdc` and `evgen trace --cdc` name the wrong setting.
 * Two private servers (one per wal_level), started once for the file.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CdcServerNotReadyError,
  migrateCdcOutbox,
  migrateInbox,
  postgresDatabase,
  writeCdcOutboxEvents,
  type Database,
} from 'evgen/runtime';
import { orderCancelledV1Descriptor } from '../../generated/order/order-cancelled/envelope.js';
import { writeOrderCancelledV1 } from '../../generated/order/order-cancelled/outbox.js';
import { runCliCaptured } from '../cli/capture-output.js';
import { startLogicalPostgres, type LogicalPostgres } from '../support/connect/logical-postgres.js';

const payload = () => ({
  orderId: randomUUID(),
  cancelledAt: '2026-03-01T10:00:00.000Z',
  reason: 'customer_request' as const,
});

interface Server {
  readonly server: LogicalPostgres;
  readonly pool: pg.Pool;
  readonly db: Database;
}

async function open(walLevel: 'logical' | 'replica'): Promise<Server> {
  const server = await startLogicalPostgres({ walLevel });
  const pool = new pg.Pool({ connectionString: server.url, max: 3 });
  pool.on('error', () => undefined);
  await pool.query('CREATE TABLE orders (id text PRIMARY KEY)');
  // `trace` also reads the consumers' inbox.
  await migrateInbox(postgresDatabase(pool));
  return { server, pool, db: postgresDatabase(pool) };
}

/** A business row and a batch of two CDC events in one transaction, as a service writes them. */
function writeOrder(db: Database): Promise<unknown> {
  return db.transaction(async (tx) => {
    await tx.query('INSERT INTO orders (id) VALUES ($1)', [randomUUID()]);
    return writeCdcOutboxEvents(tx, [
      { descriptor: orderCancelledV1Descriptor, payload: payload() },
      { descriptor: orderCancelledV1Descriptor, payload: payload() },
    ]);
  });
}

async function committed(s: Server): Promise<{ orders: number; outbox: number }> {
  const { rows } = await s.pool.query<{ orders: number; outbox: number }>(
    'SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM outbox_cdc_event) AS outbox',
  );
  return rows[0]!;
}

describe('the CDC outbox on PostgreSQL refuses a server no connector would read', () => {
  let replica: Server;
  let logical: Server;
  beforeAll(async () => {
    replica = await open('replica');
    logical = await open('logical');
  }, 120_000);
  afterAll(async () => {
    for (const s of [replica, logical]) {
      if (s === undefined) continue;
      await s.pool.end().catch(() => undefined);
      await s.server.destroy();
    }
  });

  it('wal_level=replica: migration refused naming wal_level; with connectorLater every write is refused and nothing commits', async () => {
    const refusal = await migrateCdcOutbox(replica.db).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(CdcServerNotReadyError);
    expect(refusal).toMatchObject({ setting: 'wal_level', value: 'replica', required: 'logical' });
    expect((refusal as CdcServerNotReadyError).remedy).toMatch(/restart the server/);
    const table = await replica.pool.query("SELECT to_regclass('outbox_cdc_event') AS t");
    expect(table.rows[0].t).toBeNull();

    await migrateCdcOutbox(replica.db, { connectorLater: true });
    await expect(writeOrder(replica.db)).rejects.toMatchObject({
      name: 'CdcServerNotReadyError',
      setting: 'wal_level',
      value: 'replica',
      required: 'logical',
    });
    // The single-event writer of the generated code takes the same path.
    await expect(
      replica.db.transaction(async (tx) => {
        await tx.query('INSERT INTO orders (id) VALUES ($1)', [randomUUID()]);
        return writeOrderCancelledV1(tx, payload(), {}, { mode: 'cdc' });
      }),
    ).rejects.toBeInstanceOf(CdcServerNotReadyError);
    expect(await committed(replica)).toEqual({ orders: 0, outbox: 0 });

    const status = await runCliCaptured(
      'outbox',
      'status',
      '--cdc',
      '--database-url',
      replica.server.url,
      '--fail-on-dead',
    );
    expect(status.code).toBe(1);
    expect(status.stdout).toContain('CDC writes: REFUSED');
    expect(status.stdout).toContain('wal_level is replica, needs logical');
    const trace = await runCliCaptured(
      'trace',
      randomUUID(),
      '--cdc',
      '--database-url',
      replica.server.url,
    );
    expect(trace.stdout).toContain('CDC writes: REFUSED');
    expect(trace.stdout).toContain('wal_level is replica, needs logical');
  }, 60_000);

  it("wal_level=logical: refused until the connector's slot and publication exist, then decoded; refused again once the slot is gone", async () => {
    const slot = 'evgen_cdc_refusal';
    const refusal = await migrateCdcOutbox(logical.db, { slot }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(CdcServerNotReadyError);
    expect((refusal as CdcServerNotReadyError).problems.map((p) => [p.setting, p.value])).toEqual([
      [`replication slot ${slot}`, 'missing'],
      [`publication ${slot}`, 'missing'],
    ]);
    await migrateCdcOutbox(logical.db, { slot, connectorLater: true });

    await expect(writeOrder(logical.db)).rejects.toMatchObject({
      setting: `replication slot ${slot}`,
      value: 'missing',
    });
    const status = await runCliCaptured(
      'outbox',
      'status',
      '--cdc',
      '--database-url',
      logical.server.url,
    );
    expect(status.stdout).toContain(`replication slot ${slot} is missing`);

    await logical.pool.query("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", [slot]);
    await expect(writeOrder(logical.db)).rejects.toMatchObject({
      setting: `publication ${slot}`,
      value: 'missing',
    });
    await logical.pool.query(`CREATE PUBLICATION ${slot} FOR TABLE orders`);
    await expect(writeOrder(logical.db)).rejects.toMatchObject({
      setting: `publication ${slot}`,
      value: 'without the outbox table',
    });
    expect(await committed(logical)).toEqual({ orders: 0, outbox: 0 });

    await logical.pool.query(`ALTER PUBLICATION ${slot} SET TABLE outbox_cdc_event`);
    await writeOrder(logical.db);
    expect(await committed(logical)).toEqual({ orders: 1, outbox: 0 });
    // What the connector reads: the slot decodes the two inserts (pgoutput 'I' messages).
    const decoded = await logical.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_logical_slot_peek_binary_changes($1::name, NULL, NULL,
         'proto_version', '1', 'publication_names', $1::text) WHERE get_byte(data, 0) = ascii('I')`,
      [slot],
    );
    expect(decoded.rows[0]!.n).toBe(2);
    const accepted = await runCliCaptured(
      'outbox',
      'status',
      '--cdc',
      '--database-url',
      logical.server.url,
    );
    expect(accepted.stdout).toContain('CDC writes: accepted');

    // Checked on every statement: a slot dropped while writers run refuses the next write.
    await logical.pool.query('SELECT pg_drop_replication_slot($1)', [slot]);
    await expect(writeOrder(logical.db)).rejects.toMatchObject({
      setting: `replication slot ${slot}`,
      value: 'missing',
    });
    expect(await committed(logical)).toEqual({ orders: 1, outbox: 0 });
  }, 60_000);
});
