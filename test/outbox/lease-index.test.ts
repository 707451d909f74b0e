/**
 * The relay's per-claim statements (lease renewal, SENT marks, failures, releases) and the
 * retention cleanup are index lookups, checked with EXPLAIN on the real servers over an outbox
 * shaped like a busy one: many SENT rows, a backlog of READY rows and 40 claims in flight.
 *
 * On MariaDB a renewal (`lease_token = ? AND status = 'PROCESSING'`) on an index of lease_token
 * alone was planned as an intersection with the claim index: the UPDATE locked every PROCESSING
 * row, other relays' included, and concurrent relays deadlocked (1213) on each other's marks.
 * The lease index covers (lease_token, status) now; on PostgreSQL it is partial (PROCESSING rows).
 * On MariaDB the claim's per-aggregate DEAD check was planned on the claim index, reading every
 * DEAD row of the table per candidate; its dives are held to the aggregate index now.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  migrateOutbox,
  pruneOutbox,
  type Database,
  type Publisher,
} from 'evgen/runtime';
import { outboxTableNames } from '../../src/runtime/outbox/outbox-table.js';
import { relayStatements } from '../../src/runtime/outbox/relay-statements.js';
import {
  DIALECTS,
  mariadbSessions,
  openOutbox,
  pgliteOnce,
  type OutboxFixture,
} from './support/dialects.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

const CLAIMS = 40;
const PER_CLAIM = 50;
const SENT = 10_000;
const READY = 2_000;
const token = (claim: number) => `00000000-0000-4000-8000-${String(claim).padStart(12, '0')}`;

/** SENT rows (sent a day ago, a second apart), then CLAIMS × PER_CLAIM PROCESSING rows, then READY rows. */
async function seed(f: OutboxFixture): Promise<void> {
  const processing = SENT + CLAIMS * PER_CLAIM;
  const total = processing + READY;
  const t = f.table('outbox_event');
  if (f.dialect === 'mariadb') {
    await f.db
      .query(`INSERT INTO ${t} (event_id, aggregate_type, aggregate_id, event_type, schema_version,
      payload, occurred_at, headers, status, attempts, available_at, locked_until, lease_token, created_at, sent_at)
    SELECT UUID(), 'order', CONCAT('o', seq % 1000), 'OrderPlaced', 1, '{}', UTC_TIMESTAMP(3), '{}',
      CASE WHEN seq <= ${SENT} THEN 'SENT' WHEN seq <= ${processing} THEN 'PROCESSING' ELSE 'READY' END,
      1, UTC_TIMESTAMP(3),
      CASE WHEN seq > ${SENT} AND seq <= ${processing} THEN UTC_TIMESTAMP(3) + INTERVAL 1 MINUTE END,
      CASE WHEN seq > ${SENT} AND seq <= ${processing}
        THEN CONCAT('00000000-0000-4000-8000-', LPAD(seq % ${CLAIMS}, 12, '0')) END,
      UTC_TIMESTAMP(3),
      CASE WHEN seq <= ${SENT} THEN UTC_TIMESTAMP(3) - INTERVAL 1 DAY + INTERVAL seq SECOND END
    FROM seq_1_to_${total}`);
    await f.db.query(`ANALYZE TABLE ${t}`);
    return;
  }
  await f.db
    .query(`INSERT INTO ${t} (event_id, aggregate_type, aggregate_id, event_type, schema_version,
      payload, occurred_at, status, attempts, locked_until, lease_token, sent_at)
    SELECT gen_random_uuid(), 'order', 'o' || (g % 1000), 'OrderPlaced', 1, '{}', now(),
      CASE WHEN g <= ${SENT} THEN 'SENT' WHEN g <= ${processing} THEN 'PROCESSING' ELSE 'READY' END,
      1,
      CASE WHEN g > ${SENT} AND g <= ${processing} THEN now() + interval '1 minute' END,
      CASE WHEN g > ${SENT} AND g <= ${processing}
        THEN ('00000000-0000-4000-8000-' || lpad((g % ${CLAIMS})::text, 12, '0'))::uuid END,
      CASE WHEN g <= ${SENT} THEN now() - interval '1 day' + g * interval '1 second' END
    FROM generate_series(1, ${total}) g`);
  // PGlite never analyzes on its own: its plans are the ones without statistics.
  if (f.dialect === 'postgres') await f.db.query(`ANALYZE ${t}`);
}

/** MariaDB's EXPLAIN row, or PostgreSQL's plan as one line per node. */
interface Plan {
  readonly mariadb?: { type: string; key: string | null; rows: number; Extra: string }[];
  readonly postgres?: string;
}

/** A Database whose statements are explained instead of run (each result is empty). */
function explaining(f: OutboxFixture, plans: Plan[]): Database {
  return {
    kind: f.db.kind,
    dialect: f.db.dialect,
    query: async (text: string, params?: readonly unknown[]) => {
      const explained = await f.db.query(`EXPLAIN ${text}`, params);
      plans.push(
        f.dialect === 'mariadb'
          ? { mariadb: explained.rows as unknown as NonNullable<Plan['mariadb']> }
          : { postgres: explained.rows.map((row) => String(row['QUERY PLAN'])).join('\n') },
      );
      return { rows: [], rowCount: 0 };
    },
  } as unknown as Database;
}

/** The ids of claim `claim`'s rows, as the relay passes them. */
async function idsOf(f: OutboxFixture, claim: number, limit: number): Promise<string[]> {
  const rows = await f.db.query<{ id: string }>(
    f.sql(
      `SELECT ${f.dialect === 'mariadb' ? 'CAST(id AS CHAR)' : 'id::text'} AS id FROM ${f.table('outbox_event')}
       WHERE lease_token = $1${f.dialect === 'mariadb' ? '' : '::uuid'} ORDER BY id LIMIT ${limit}`,
    ),
    [token(claim)],
  );
  return rows.rows.map((row) => row.id);
}

describe.each(DIALECTS)('the relay finds a claim’s rows by index on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('renewal, SENT marks, failures and releases read the claim’s rows through an index, the renewal through the lease index', async () => {
    const f = (fixture = await openOutbox(dialect, pglite));
    await seed(f);
    const sql = relayStatements(outboxTableNames({ schema: f.schema }, f.db.dialect), f.db.dialect);
    const ids = await idsOf(f, 7, 3);
    expect(ids).toHaveLength(3);
    const plans: Plan[] = [];
    const db = explaining(f, plans);
    await sql.renew(db, token(7), 60_000, null);
    await sql.sent(db, ids, token(7), null);
    await sql.failed(db, ids[0]!, token(7), 'READY', null, 1_000, 'nack');
    await sql.deferred(db, ids[0]!, token(7), null, 'broker unavailable');
    await sql.release(db, ids, token(7));
    await sql.abandon(db, ids, token(7), null);
    expect(plans).toHaveLength(6);
    const [renew, ...byIds] = plans;
    if (dialect === 'mariadb') {
      console.log(`[${dialect}] renew: ${JSON.stringify(renew!.mariadb)}`);
      // One range of the lease index: this claim's rows only, no intersection with the claim index.
      expect(renew!.mariadb).toMatchObject([{ type: 'range', key: 'outbox_event_lease_idx' }]);
      expect(Number(renew!.mariadb![0]!.rows)).toBeLessThanOrEqual(PER_CLAIM * 2);
      for (const plan of byIds) {
        expect(plan.mariadb).toHaveLength(1);
        const [row] = plan.mariadb!;
        expect(['range', 'ref', 'eq_ref', 'const']).toContain(row!.type);
        expect(row!.key).not.toBeNull();
        expect(Number(row!.rows)).toBeLessThanOrEqual(ids.length * 2);
      }
    } else {
      console.log(`[${dialect}] renew:\n${renew!.postgres}`);
      expect(renew!.postgres).toMatch(
        /Index Scan using outbox_event_lease_idx|Bitmap Index Scan on outbox_event_lease_idx/,
      );
      // The others probe by id (primary key or the claim index, keyed by id) or by lease token.
      for (const plan of plans) {
        expect(plan.postgres).not.toContain('Seq Scan');
        expect(plan.postgres).toMatch(/Index Cond: \(\(?(id|lease_token) = /);
      }
    }
    // The planners choose indexes only on a table of realistic size (14 000 rows): seeding it on
    // PGlite (WebAssembly, one thread) takes ~5 s on a quiet machine and over a minute at load ~10.
  }, 180_000);
});

describe('on MariaDB', () => {
  let fixture: OutboxFixture | undefined;
  const sessions = mariadbSessions();
  afterEach(async () => {
    await sessions.endAll();
    await fixture?.close();
    fixture = undefined;
  });

  const leaseIndexColumns = async (f: OutboxFixture) =>
    (
      await f.db.query<{ column: string }>(
        `SELECT COLUMN_NAME AS \`column\` FROM information_schema.STATISTICS
         WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'outbox_event' AND INDEX_NAME = 'outbox_event_lease_idx'
         ORDER BY SEQ_IN_INDEX`,
        [f.schema],
      )
    ).rows.map((row) => row.column);

  it('a renewal locks only its own claim’s rows: another claim’s row stays free to mark SENT', async () => {
    const f = (fixture = await openOutbox('mariadb', pglite));
    await seed(f);
    const sql = relayStatements(outboxTableNames({ schema: f.schema }, f.db.dialect), f.db.dialect);
    const [other] = await idsOf(f, 8, 1);
    const renewing = await sessions.open(f);
    await renewing.query('START TRANSACTION');
    // The relay's renewal, held open: its row locks last until the ROLLBACK below.
    await sql.renew(
      {
        dialect: f.db.dialect,
        query: (text: string, params: unknown[]) => renewing.query(text, params),
      } as unknown as Database,
      token(7),
      60_000,
      null,
    );
    const rival = await sessions.open(f);
    const [locked] = await rival.query(
      `SELECT CAST(id AS CHAR) AS id FROM ${f.table('outbox_event')} WHERE id = ? FOR UPDATE NOWAIT`,
      [other],
    );
    expect(locked).toEqual([{ id: other }]);
    await renewing.query('ROLLBACK');
  });

  it('a table migrated with the earlier lease index (lease_token alone, or none) gets (lease_token, status) on the next migrate; a third migrate changes nothing', async () => {
    const f = (fixture = await openOutbox('mariadb', pglite));
    const t = f.table('outbox_event');
    expect(await leaseIndexColumns(f)).toEqual(['lease_token', 'status']);
    await f.db.query(
      `ALTER TABLE ${t} DROP KEY outbox_event_lease_idx, ADD KEY outbox_event_lease_idx (lease_token)`,
    );
    await migrateOutbox(f.db, { schema: f.schema });
    expect(await leaseIndexColumns(f)).toEqual(['lease_token', 'status']);
    await f.db.query(`ALTER TABLE ${t} DROP KEY outbox_event_lease_idx`);
    await migrateOutbox(f.db, { schema: f.schema });
    expect(await leaseIndexColumns(f)).toEqual(['lease_token', 'status']);
    const before = await f.db.query(`SHOW CREATE TABLE ${t}`);
    await migrateOutbox(f.db, { schema: f.schema });
    expect((await f.db.query(`SHOW CREATE TABLE ${t}`)).rows).toEqual(before.rows);
  });

  it('retention cleanup deletes a batch in id order through an index, without a filesort over every expired row', async () => {
    const f = (fixture = await openOutbox('mariadb', pglite));
    await seed(f);
    const plans: Plan[] = [];
    await pruneOutbox(explaining(f, plans), {
      schema: f.schema,
      olderThanMs: 3_600_000,
      batchSize: 1_000,
    });
    expect(plans).toHaveLength(1);
    const [row] = plans[0]!.mariadb!;
    console.log(`[mariadb] prune: ${JSON.stringify(row)}`);
    expect(row!.key).not.toBeNull();
    expect(row!.Extra).not.toContain('filesort');
  });

  it('concurrent relays renewing leases while they mark SENT: no deadlock (1213) over a fixed workload', async () => {
    const f = (fixture = await openOutbox('mariadb', pglite));
    const events = 3_000;
    await f.db
      .query(`INSERT INTO ${f.table('outbox_event')} (event_id, aggregate_type, aggregate_id,
        event_type, schema_version, payload, occurred_at, headers, status, attempts, available_at, created_at)
      SELECT UUID(), 'order', CONCAT('o', seq % 400), 'OrderPlaced', 1, '{}', UTC_TIMESTAMP(3), '{}',
        'READY', 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)
      FROM seq_1_to_${events}`);
    const errors: unknown[] = [];
    // Slow confirms and a short lease: each claim is renewed several times while its rows are
    // marked SENT, by four relays at once. Against the earlier index (lease_token alone) this
    // test saw 15 deadlocks in 27 renewals.
    const publisher: Publisher = {
      publish: () => new Promise<void>((resolve) => setTimeout(resolve, 30)),
    };
    const relays = Array.from({ length: 4 }, () =>
      createOutboxRelay({
        db: f.openAnother(4),
        schema: f.schema,
        publisher,
        notifyChannel: false,
        leaseMs: 400,
        publishTimeoutMs: 150,
        batchSize: 50,
        maxInFlight: 32,
        pollIntervalMs: 20,
        hooks: { onError: (error) => errors.push(error) },
      }),
    );
    await Promise.all(relays.map((relay) => relay.start()));
    try {
      for (;;) {
        const open = await f.db.query<{ n: number | string }>(
          `SELECT COUNT(*) AS n FROM ${f.table('outbox_event')} WHERE status <> 'SENT'`,
        );
        if (Number(open.rows[0]!.n) === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await Promise.all(relays.map((relay) => relay.stop({ timeoutMs: 5_000 })));
    }
    const renewals = relays.reduce((sum, relay) => sum + relay.metrics().leaseRenewals, 0);
    const deadlocks = errors.filter((error) => (error as { errno?: number }).errno === 1213);
    console.log(
      `[mariadb] ${events} rows, 4 relays: ${renewals} renewals, ${deadlocks.length} deadlocks, ${errors.length} errors`,
    );
    expect(renewals).toBeGreaterThan(0);
    expect(deadlocks).toEqual([]);
  });

  it('the claim’s head check reaches an aggregate’s DEAD rows through the aggregate index, not every DEAD row of the table', async () => {
    const f = (fixture = await openOutbox('mariadb', pglite));
    const t = f.table('outbox_event');
    // 5 000 DEAD rows over 500 aggregates, then 200 READY rows of others.
    await f.db
      .query(`INSERT INTO ${t} (event_id, aggregate_type, aggregate_id, event_type, schema_version,
        payload, occurred_at, headers, status, attempts, available_at, created_at)
      SELECT UUID(), 'order', CONCAT(IF(seq <= 5000, 'dead', 'live'), seq % 500), 'OrderPlaced', 1,
        '{}', UTC_TIMESTAMP(3), '{}', IF(seq <= 5000, 'DEAD', 'READY'), 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)
      FROM seq_1_to_5200`);
    await f.db.query(`ANALYZE TABLE ${t}`);
    const sql = relayStatements(outboxTableNames({ schema: f.schema }, f.db.dialect), f.db.dialect);
    const plans: NonNullable<Plan['mariadb']>[] = [];
    // The claim's transaction with its statements explained instead of run; MariaDB takes
    // EXPLAIN after the heads query's leading `SET STATEMENT … FOR` comment.
    const explainingTx = {
      dialect: f.db.dialect,
      query: async (text: string, params?: readonly unknown[]) => {
        const explained = await f.db.query(
          text.replace(/^(\/\*M![^*]*\*\/ )?/, '$1EXPLAIN '),
          params,
        );
        plans.push(explained.rows as unknown as NonNullable<Plan['mariadb']>);
        return { rows: [], rowCount: 0 };
      },
    };
    const db = {
      kind: f.db.kind,
      dialect: f.db.dialect,
      transaction: (work: (tx: typeof explainingTx) => Promise<unknown>) => work(explainingTx),
    } as unknown as Database;
    await sql.claim(db, {
      batchSize: 100,
      token: token(1),
      leaseMs: 60_000,
      now: null,
      sentIds: [],
      sentToken: null,
    });
    expect(plans).toHaveLength(1);
    // The heads query's three per-aggregate dives (READY, PROCESSING, DEAD).
    const dives = plans[0]!.filter((row) => (row as { table?: string }).table === 'e');
    console.log(`[mariadb] heads dives: ${JSON.stringify(dives)}`);
    expect(dives).toHaveLength(3);
    for (const dive of dives) {
      expect(dive.key).toBe('outbox_event_aggregate_open_idx');
      expect(Number(dive.rows)).toBeLessThan(100);
    }
  });
});
