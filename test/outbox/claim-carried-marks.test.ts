/**
 * A lane's claim statement also writes the previous batch's SENT marks. Only the rows it really
 * marks (their lease still held by that batch) may free their aggregate for this claim: a row
 * whose lease was lost keeps holding the rows behind it back. On PostgreSQL both ways of finding
 * heads (per aggregate, by a scan in id order).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { writeOutboxEvent } from 'evgen/runtime';
import { outboxTableNames } from '../../src/runtime/outbox/outbox-table.js';
import { relayStatements } from '../../src/runtime/outbox/relay-statements.js';
import { CLAIM_CASES, openOutbox, pgliteOnce, type OutboxFixture } from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

describe.each(CLAIM_CASES)(
  'claim carrying SENT marks on $dialect, heads $heads',
  ({ dialect, fewAggregates }) => {
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
      const statements = relayStatements(
        outboxTableNames({ schema: f.schema }, f.db.dialect),
        f.db.dialect,
        fewAggregates === undefined ? {} : { fewAggregates },
      );
      const claim = (sentIds: string[], sentToken: string | null) =>
        statements
          .claim(f.db, {
            batchSize: 2,
            token: randomUUID(),
            leaseMs: 60_000,
            now: null,
            sentIds,
            sentToken,
          })
          .then((batch) => batch.rows);
      const firstToken = randomUUID();
      const { rows: first } = await statements.claim(f.db, {
        batchSize: 2,
        token: firstToken,
        leaseMs: 60_000,
        now: null,
        sentIds: [],
        sentToken: null,
      });
      expect(first.map((row) => row.aggregate_id).sort()).toEqual(['a', 'b']);
      const a1 = first.find((row) => row.aggregate_id === 'a')!.id;
      const status = async () =>
        (
          await f.db.query<{ status: string }>(
            `SELECT status FROM ${f.table('outbox_event')} ORDER BY id`,
          )
        ).rows.map((row) => row.status);
      return { f, claim, firstToken, a1, status };
    }

    it('marks the carried rows SENT and claims the row behind one of them in the same statement', async () => {
      const { claim, firstToken, a1, status } = await firstClaim();
      const second = await claim([a1], firstToken);
      expect(second.map((row) => row.aggregate_id)).toEqual(['a']);
      expect(await status()).toEqual(['SENT', 'PROCESSING', 'PROCESSING']);
    });

    it('does not free an aggregate whose carried row it could not mark (lease lost)', async () => {
      const { claim, a1, status } = await firstClaim();
      const second = await claim([a1], randomUUID());
      expect(second).toEqual([]);
      expect(await status()).toEqual(['PROCESSING', 'READY', 'PROCESSING']);
    });
  },
);
