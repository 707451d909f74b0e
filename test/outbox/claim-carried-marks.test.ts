/**
 * A lane's claim statement also writes the previous batch's SENT marks. Only the rows it really
 * marks (their lease still held by that batch) may free their aggregate for this claim: a row
 * whose lease was lost keeps holding the rows behind it back.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { writeOutboxEvent } from 'evgen/runtime';
import { claimSql, idArray } from '../../src/runtime/outbox/claim-query.js';
import { outboxTableNames } from '../../src/runtime/outbox/outbox-table.js';
import { DIALECTS, openOutbox, pgliteOnce, type OutboxFixture } from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

describe.each(DIALECTS)('claim carrying SENT marks on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  /** Rows a1, a2 (aggregate a) and b1; the first claim (batch 2) takes the heads a1 and b1. */
  async function firstClaim() {
    const f = (fixture = await openOutbox(dialect, pglite));
    await f.db.transaction(async (tx) => {
      for (const [orderId, amount] of [
        ['a', 1],
        ['a', 2],
        ['b', 1],
      ] as const)
        await writeOutboxEvent(tx, orderPlacedV1, { orderId, amount }, {}, { schema: f.schema });
    });
    const claim = claimSql(outboxTableNames({ schema: f.schema }));
    const firstToken = randomUUID();
    const first = await f.db.query<{ id: string; aggregate_id: string }>(claim, [
      2,
      firstToken,
      60_000,
      null,
      idArray([]),
      null,
    ]);
    expect(first.rows.map((row) => row.aggregate_id).sort()).toEqual(['a', 'b']);
    const a1 = first.rows.find((row) => row.aggregate_id === 'a')!.id;
    const status = async () =>
      (
        await f.db.query<{ id: string; status: string }>(
          `SELECT id::text AS id, status FROM "${f.schema}".outbox_event ORDER BY id`,
        )
      ).rows.map((row) => row.status);
    return { f, claim, firstToken, a1, status };
  }

  it('marks the carried rows SENT and claims the row behind one of them in the same statement', async () => {
    const { f, claim, firstToken, a1, status } = await firstClaim();
    const second = await f.db.query<{ aggregate_id: string; payload: unknown }>(claim, [
      2,
      randomUUID(),
      60_000,
      null,
      idArray([a1]),
      firstToken,
    ]);
    expect(second.rows.map((row) => row.aggregate_id)).toEqual(['a']);
    expect(await status()).toEqual(['SENT', 'PROCESSING', 'PROCESSING']);
  });

  it('does not free an aggregate whose carried row it could not mark (lease lost)', async () => {
    const { f, claim, a1, status } = await firstClaim();
    const second = await f.db.query(claim, [
      2,
      randomUUID(),
      60_000,
      null,
      idArray([a1]),
      randomUUID(),
    ]);
    expect(second.rows).toEqual([]);
    expect(await status()).toEqual(['PROCESSING', 'READY', 'PROCESSING']);
  });
});
