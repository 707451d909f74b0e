/**
 * What a claim takes as heads, on every dialect: the lowest unsent row of each aggregate, found
 * wherever it is (behind SENT history, a row given back to READY below every other open row),
 * never a row behind a DEAD or a locked head, and returned as stored with this claim's attempt
 * counted, whether the claim read its rows back (MariaDB, rows behind a head) or not (heads alone).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { writeOutboxEvent } from 'evgen/runtime';
import { outboxTableNames } from '../../src/runtime/outbox/outbox-table.js';
import { relayStatements } from '../../src/runtime/outbox/relay-statements.js';
import { DIALECTS, openOutbox, pgliteOnce, type OutboxFixture } from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

describe.each(DIALECTS)('claimed heads on %s', (dialect) => {
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
    const statements = relayStatements(
      outboxTableNames({ schema: f.schema }, f.db.dialect),
      f.db.dialect,
    );
    const claim = (batchSize: number, leaseMs = 60_000, db = f.db) =>
      statements.claim(db, {
        batchSize,
        token: randomUUID(),
        leaseMs,
        now: null,
        sentIds: [],
        sentToken: null,
      });
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
