/**
 * On a PostgreSQL server the relay's statements run as named prepared statements (node-postgres
 * prepares each once per connection). After five executions PostgreSQL may switch to a generic
 * plan, made without the parameter values (the batch size, `now`): the claim must then still
 * walk the claim index in id order up to a batch, not bitmap-scan and sort the whole backlog.
 * Checked on a 20 000-row backlog behind 10 000 SENT rows, without statistics and after ANALYZE:
 * more than five claims on one connection, then the plan forced generic (`plan_cache_mode`; the
 * server is PostgreSQL 15, without EXPLAIN (GENERIC_PLAN)) explained and run.
 *
 * A connection the server ends (pg_terminate_backend, as a restart does to every connection)
 * takes its prepared statements with it; the pool's next connection prepares them again.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordingPublisher, createOutboxRelay, writeOutboxEvent } from 'evgen/runtime';
import { outboxTableNames } from '../../src/runtime/outbox/outbox-table.js';
import { relayStatements } from '../../src/runtime/outbox/relay-statements.js';
import { openOutbox, outboxRows, pgliteOnce, type OutboxFixture } from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const SENT = 10_000;
const READY = 20_000;
const AGGREGATES = 2_000;
const BATCH = 100;
const CLAIMS = 8;

async function seed(f: OutboxFixture): Promise<void> {
  await f.db.query(`INSERT INTO ${f.table('outbox_event')} (event_id, aggregate_type, aggregate_id,
      event_type, schema_version, payload, occurred_at, status, attempts, sent_at)
    SELECT gen_random_uuid(), 'order', 'o' || (g % ${AGGREGATES}), 'OrderPlaced', 1, '{}', now(),
      CASE WHEN g <= ${SENT} THEN 'SENT' ELSE 'READY' END, 0,
      CASE WHEN g <= ${SENT} THEN now() - interval '1 day' END
    FROM generate_series(1, ${SENT + READY}) g`);
}

const planText = (rows: Record<string, unknown>[]) =>
  rows.map((row) => String(row['QUERY PLAN'])).join('\n');

describe('the relay’s prepared claim on PostgreSQL', () => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it.each([
    ['without statistics', false],
    ['after ANALYZE', true],
  ])(
    '%s: a generic plan after more than five claims still walks the claim index in id order up to a batch',
    async (_label, analyze) => {
      const f = (fixture = await openOutbox('postgres', pgliteOnce()));
      await seed(f);
      if (analyze) await f.db.query(`ANALYZE ${f.table('outbox_event')}`);
      // One connection: every claim reuses the statement prepared on it, and EXPLAIN sees it.
      const db = f.openAnother(1);
      const sql = relayStatements(outboxTableNames({ schema: f.schema }, db.dialect), db.dialect);
      let sentIds: string[] = [];
      let sentToken: string | null = null;
      for (let claim = 0; claim < CLAIMS; claim++) {
        const token = randomUUID();
        const { rows } = await sql.claim(db, {
          batchSize: BATCH,
          token,
          leaseMs: 60_000,
          now: null,
          sentIds,
          sentToken,
        });
        // The backlog's lowest ids, one head per aggregate, in order.
        const ids = rows.map((row) => Number(row.id)).sort((a, b) => a - b);
        expect(ids).toEqual(Array.from({ length: BATCH }, (_, k) => SENT + claim * BATCH + k + 1));
        sentIds = rows.map((row) => row.id);
        sentToken = token;
      }
      const prepared = await db.query<{ name: string; generic: string; custom: string }>(
        `SELECT name, generic_plans::text AS generic, custom_plans::text AS custom
         FROM pg_prepared_statements WHERE name LIKE 'evgen_claim_%'`,
      );
      expect(prepared.rows).toHaveLength(1);
      const { name, generic, custom } = prepared.rows[0]!;
      expect(Number(generic) + Number(custom)).toBe(CLAIMS);
      console.log(`[${_label}] ${name}: ${generic} generic, ${custom} custom plans`);

      const args = `(${BATCH}, '${randomUUID()}', 60000, NULL, '{${sentIds.join(',')}}', '${sentToken}', false, 0)`;
      await db.query(`SET plan_cache_mode = force_generic_plan`);
      try {
        const generic = planText(
          (await db.query(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE ${name}${args}`)).rows,
        );
        console.log(`[${_label}] generic plan, run:\n${generic}`);
        const heads = generic
          .split('\n')
          .find((line) => / on outbox_event o\b/.test(line) && !line.includes(' e '));
        // The heads: the claim index in id order (no bitmap scan, no sort of the backlog).
        expect(heads).toMatch(
          /Index (Only )?Scan using outbox_event_claimable_idx on outbox_event o/,
        );
        expect(generic).not.toMatch(/Sort Key: o\.id/);
        // Up to a batch: this claim's 100 heads (and the 800 rows the earlier claims hold, which the
        // index still lists), not the 20 000-row backlog.
        const scanned = Number(/rows=(\d+)/.exec(heads!)?.[1]);
        expect(scanned).toBeGreaterThanOrEqual(BATCH);
        expect(scanned).toBeLessThanOrEqual(BATCH * (CLAIMS + 2));
        const claimed = Number(/^Update on outbox_event r .*rows=(\d+)/m.exec(generic)?.[1]);
        expect(claimed).toBe(BATCH);
      } finally {
        await db.query(`RESET plan_cache_mode`);
      }
    },
    120_000,
  );

  it('two relays on different outbox tables share one connection: each prepares its own statements', async () => {
    const f = (fixture = await openOutbox('postgres', pgliteOnce()));
    const other = await openOutbox('postgres', pgliteOnce());
    try {
      const shared = f.openAnother(1);
      const publisher = new RecordingPublisher();
      const relays = [f, other].map((o) =>
        createOutboxRelay({ db: shared, publisher, schema: o.schema, notifyChannel: false }),
      );
      for (const o of [f, other]) {
        await o.db.transaction((tx) =>
          writeOutboxEvent(
            tx,
            orderPlacedV1,
            { orderId: 'order-1', amount: 1 },
            {},
            { schema: o.schema, notifyChannel: false },
          ),
        );
      }
      for (const relay of relays) expect((await relay.runOnce()).claimed).toBe(1);
      for (const relay of relays) expect((await relay.runOnce()).claimed).toBe(0);
      const claims = await shared.query(
        `SELECT name FROM pg_prepared_statements WHERE name LIKE 'evgen_claim_%'`,
      );
      expect(claims.rows).toHaveLength(2);
      expect(publisher.published).toHaveLength(2);
      for (const relay of relays) await relay.stop();
    } finally {
      await other.close();
    }
  });

  it('a connection the server ends is replaced and the statements are prepared again on the new one', async () => {
    const f = (fixture = await openOutbox('postgres', pgliteOnce()));
    const write = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        await f.db.transaction((tx) =>
          writeOutboxEvent(
            tx,
            orderPlacedV1,
            { orderId: `order-${i % 5}`, amount: i },
            {},
            { schema: f.schema, notifyChannel: false },
          ),
        );
      }
    };
    const publisher = new RecordingPublisher();
    const relayDb = f.openAnother(1);
    const relay = createOutboxRelay({
      db: relayDb,
      publisher,
      schema: f.schema,
      batchSize: 3,
      notifyChannel: false,
    });
    const drain = async () => {
      for (let round = 0; round < 100; round++) {
        const result = await relay.runOnce().catch(() => undefined);
        if (result?.claimed === 0) return;
      }
    };
    await write(0, 20);
    await drain();
    const backends = async () =>
      (
        await relayDb.query<{ pid: number }>(
          `SELECT pg_backend_pid() AS pid, count(*)::int AS prepared FROM pg_prepared_statements WHERE name LIKE 'evgen_%'`,
        )
      ).rows;
    const [before] = await backends();
    expect(before).toMatchObject({ prepared: expect.any(Number) });
    expect((before as unknown as { prepared: number }).prepared).toBeGreaterThanOrEqual(2);
    await f.db.query(`SELECT pg_terminate_backend($1)`, [before!.pid]);
    await write(20, 40);
    await drain();
    await drain();
    const [after] = await backends();
    expect(after!.pid).not.toBe(before!.pid);
    expect((after as unknown as { prepared: number }).prepared).toBeGreaterThanOrEqual(2);
    await relay.stop();
    const rows = await outboxRows(f);
    expect(rows).toHaveLength(40);
    expect(rows.every((row) => row.status === 'SENT')).toBe(true);
    const messageIds = publisher.published.map((m) => m.envelope.messageId);
    expect(new Set(messageIds).size).toBe(40);
  }, 60_000);
});
