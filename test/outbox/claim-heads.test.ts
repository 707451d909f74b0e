/**
 * What a claim takes as heads, on every dialect: the lowest unsent row of each aggregate, found
 * wherever it is (behind SENT history, a row given back to READY below every other open row),
 * never a row behind a DEAD or a locked head, and returned as stored with this claim's attempt
 * counted, whether the claim read its rows back (MariaDB, rows behind a head) or not (heads alone).
 * On PostgreSQL the heads are found per aggregate when few aggregates have unsent rows, else by a
 * scan in id order: every test runs both ways, and random outboxes get the same claim from both.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { writeOutboxEvent, type Database } from 'evgen/runtime';
import { outboxTableNames } from '../../src/runtime/outbox/outbox-table.js';
import { relayStatements } from '../../src/runtime/outbox/relay-statements.js';
import {
  CLAIM_CASES,
  DIALECTS,
  openOutbox,
  outboxClaims,
  pgliteOnce,
  rolledBack,
  type OutboxFixture,
} from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

describe.each(CLAIM_CASES)('claimed heads on $dialect, $heads', ({ dialect, fewAggregates }) => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  /** Writes one row per order id, in the given order; returns the fixture and a claim function. */
  async function outbox(orderIds: readonly string[]) {
    const f = (fixture = await openOutbox(dialect, pglite));
    await f.db.transaction(async (tx) => {
      for (const [amount, orderId] of orderIds.entries())
        await writeOutboxEvent(tx, orderPlacedV1, { orderId, amount }, {}, { schema: f.schema });
    });
    const { claim: claimBatch } = outboxClaims(f, fewAggregates);
    const claim = (batchSize: number, leaseMs = 60_000, db = f.db) =>
      claimBatch(batchSize, { leaseMs, db }).then((batch) => batch.rows);
    const ids = (
      await f.db.query<{ id: string }>(`SELECT id FROM ${f.table('outbox_event')} ORDER BY id`)
    ).rows.map((row) => String(row.id));
    const setStatus = (status: string, where: string) =>
      f.db.query(f.sql(`UPDATE ${f.table('outbox_event')} SET status = $1 WHERE ${where}`), [
        status,
      ]);
    return { f, claim, ids, setStatus };
  }

  it('finds the heads behind SENT history and a row given back to READY below every open row', async () => {
    const { claim, ids, setStatus } = await outbox(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
    // a, b and c's first rows SENT long ago; b's second DEAD, then revived below a's and c's heads.
    await setStatus('SENT', `id IN (${ids.slice(0, 3).join(', ')})`);
    await setStatus('DEAD', `id = ${ids[4]}`);
    const blocked = await claim(2);
    expect(blocked.map((row) => [row.aggregate_id, row.id])).toEqual([
      ['a', ids[3]],
      ['c', ids[5]],
    ]);
    await setStatus('READY', `id = ${ids[4]}`);
    const revived = await claim(1);
    expect(revived.map((row) => [row.aggregate_id, row.id])).toEqual([['b', ids[4]]]);
  });

  it('returns heads alone as stored, with the attempt this claim starts; a lease taken over counts again', async () => {
    const { claim, ids } = await outbox(['a', 'b']);
    const first = await claim(2, 1);
    expect(first.map((row) => [row.id, row.aggregate_id, Number(row.attempts)])).toEqual([
      [ids[0], 'a', 1],
      [ids[1], 'b', 1],
    ]);
    expect(first[0]!.event_id).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = await claim(2);
    expect(again.map((row) => [row.id, Number(row.attempts)])).toEqual([
      [ids[0], 2],
      [ids[1], 2],
    ]);
    expect(again.map((row) => row.payload)).toEqual(first.map((row) => row.payload));
  });

  it.skipIf(dialect === 'pglite')(
    'skips a head another transaction holds, and takes nothing behind it',
    async () => {
      const { f, claim, ids } = await outbox(['a', 'b', 'a', 'b']);
      const other = f.openAnother(2);
      let held!: () => void;
      const release = new Promise<void>((resolve) => (held = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = other.transaction(async (tx) => {
        await tx.query(
          f.sql(`SELECT id FROM ${f.table('outbox_event')} WHERE id = $1::bigint FOR UPDATE`),
          [ids[0]],
        );
        locked();
        await release;
      });
      try {
        await isLocked;
        const claimed = await claim(4);
        expect(claimed.map((row) => row.id)).toEqual([ids[1], ids[3]]);
      } finally {
        held();
        await holder;
      }
    },
  );
});

describe.each(DIALECTS.filter((dialect) => dialect !== 'mariadb'))(
  'the two ways of finding heads on %s',
  (dialect) => {
    let fixture: OutboxFixture | undefined;
    afterEach(async () => {
      await fixture?.close();
      fixture = undefined;
    });

    it('claim the same rows from random outboxes (SENT history, DEAD, backing off, leased, expired leases)', async () => {
      const f = (fixture = await openOutbox(dialect, pglite));
      const table = f.table('outbox_event');
      const names = outboxTableNames({ schema: f.schema }, f.db.dialect);
      const perAggregate = relayStatements(names, f.db.dialect, { fewAggregates: 32 });
      const byScan = relayStatements(names, f.db.dialect, { fewAggregates: 0 });
      // The relay's default: per aggregate while at most a batch of them is free.
      const byDefault = relayStatements(names, f.db.dialect);
      // A fixed seed: the same outboxes every run.
      let seed = 7;
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      const states = [
        `'SENT', now() - interval '1 hour', NULL`,
        `'READY', now() - interval '1 second', NULL`,
        `'READY', now() + interval '1 hour', NULL`,
        `'PROCESSING', now() - interval '1 hour', now() + interval '1 hour'`,
        `'PROCESSING', now() - interval '1 hour', now() - interval '1 second'`,
        `'DEAD', now() - interval '1 hour', NULL`,
      ];
      for (let round = 0; round < 12; round++) {
        await f.db.query(`DELETE FROM ${table}`);
        const aggregates = 1 + Math.floor(random() * 6);
        const rows = 5 + Math.floor(random() * 40);
        const values = Array.from({ length: rows }, () => {
          const state = states[Math.floor(random() * states.length)]!;
          const aggregate = `agg-${Math.floor(random() * aggregates)}`;
          return `(gen_random_uuid(), 'order', '${aggregate}', 'OrderPlaced', 1, '{}', now(), ${state})`;
        });
        await f.db.query(`INSERT INTO ${table} (event_id, aggregate_type, aggregate_id, event_type,
            schema_version, payload, occurred_at, status, available_at, locked_until)
          VALUES ${values.join(', ')}`);
        for (const batchSize of [1, 3, 100]) {
          // The claim only runs queries: inside a transaction, to be rolled back.
          const claimed = (statements: typeof byScan) =>
            rolledBack(f.db, async (tx) => {
              const { rows } = await statements.claim(tx as unknown as Database, {
                batchSize,
                token: randomUUID(),
                leaseMs: 60_000,
                now: null,
                sentIds: [],
                sentToken: null,
              });
              return rows.map((row) => String(row.id)).sort();
            });
          const scanned = await claimed(byScan);
          expect(await claimed(perAggregate), `round ${round}, batch ${batchSize}`).toEqual(
            scanned,
          );
          expect(await claimed(byDefault), `round ${round}, batch ${batchSize}`).toEqual(scanned);
          if (round === 0 && batchSize === 100) expect(scanned.length).toBeGreaterThan(0);
        }
      }
    });
  },
);
