/**
 * The MariaDB claim's round trips, counted on the connection (issue #37: each one is a wait on a
 * loaded machine). A claim of heads alone, carrying the previous batch's SENT marks, is SET
 * TRANSACTION, START TRANSACTION, the heads SELECT, one UPDATE (lease and marks), COMMIT; a mark
 * whose lease was lost costs the rolled-back try and a claim with the marks written first. A
 * claim after one that took rows scans a bounded number of rows first, and the whole backlog only
 * if that found nothing; after a claim that took nothing (idle polls) it scans the whole at once.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateOutbox, mysqlDatabase, writeOutboxEvent } from 'evgen/runtime';
import type { MysqlPoolLike } from '../../src/runtime/db/mysql-database.js';
import { outboxTableNames } from '../../src/runtime/outbox/outbox-table.js';
import { relayStatements } from '../../src/runtime/outbox/relay-statements.js';
import { createMariadbDatabase, type TestMariadbDatabase } from '../support/mariadb.js';
import { orderPlacedV1 } from './support/test-event.js';

/** The pool, with the first words of every statement sent on a pooled connection recorded. */
function countingPool(pool: MysqlPoolLike, sent: string[]): MysqlPoolLike {
  const record = (sql: string) => sent.push(sql.trim().split(/\s+/).slice(0, 2).join(' '));
  return {
    query: (sql, values) => pool.query(sql, values),
    async getConnection() {
      const connection = await pool.getConnection();
      return {
        query: (sql, values) => {
          record(sql);
          return connection.query(sql, values);
        },
        release: () => connection.release(),
        destroy: () => connection.destroy(),
      };
    },
  };
}

describe('MariaDB claim round trips', () => {
  let test: TestMariadbDatabase | undefined;
  afterEach(async () => {
    await test?.drop();
    test = undefined;
  });

  /** Rows a1, a2, b1, b2; the first claim (batch 2) leases the heads a1 and b1. */
  async function claimedHeads() {
    test = await createMariadbDatabase('evgen_round_trips');
    const sent: string[] = [];
    const db = mysqlDatabase(countingPool(test.pool, sent));
    await migrateOutbox(db, { schema: test.schema });
    await db.transaction(async (tx) => {
      for (const [orderId, amount] of [
        ['a', 1],
        ['a', 2],
        ['b', 1],
        ['b', 2],
      ] as const)
        await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId, amount },
          {},
          { schema: test!.schema },
        );
    });
    const statements = relayStatements(
      outboxTableNames({ schema: test.schema }, db.dialect),
      db.dialect,
    );
    const claim = (token: string, sentIds: readonly string[], sentToken: string | null) =>
      statements
        .claim(db, { batchSize: 2, token, leaseMs: 60_000, now: null, sentIds, sentToken })
        .then((batch) => batch.rows);
    const firstToken = randomUUID();
    const first = await claim(firstToken, [], null);
    expect(first.map((row) => `${row.aggregate_id}${row.attempts}`).sort()).toEqual(['a1', 'b1']);
    const status = async () =>
      (
        await db.query<{ status: string }>(
          `SELECT status FROM \`${test!.schema}\`.outbox_event ORDER BY id`,
        )
      ).rows.map((row) => row.status);
    sent.length = 0;
    return { claim, first, firstToken, sent, status };
  }

  it('claims the heads behind carried SENT marks in five statements, the marks and the lease in one UPDATE', async () => {
    const { claim, first, firstToken, sent, status } = await claimedHeads();
    const second = await claim(
      randomUUID(),
      first.map((row) => row.id),
      firstToken,
    );
    expect(second.map((row) => row.aggregate_id).sort()).toEqual(['a', 'b']);
    expect(sent).toEqual([
      'SET TRANSACTION',
      'START TRANSACTION',
      // The heads SELECT, behind MariaDB's executable comment that turns its subquery cache off.
      '/*M!100301 SET',
      'UPDATE `' + test!.schema + '`.`outbox_event`',
      'COMMIT',
    ]);
    expect(await status()).toEqual(['SENT', 'PROCESSING', 'SENT', 'PROCESSING']);
  });

  it('a claim that finds nothing within its bounded scan scans the whole backlog; while claims find nothing, one scan', async () => {
    const { claim, sent } = await claimedHeads();
    const heads = () => sent.filter((statement) => statement === '/*M!100301 SET').length;
    // Both aggregates held by the first claim: the bounded scan finds nothing, nor does the whole.
    expect(await claim(randomUUID(), [], null)).toEqual([]);
    expect(heads()).toBe(2);
    // Idle from now on: each poll is one scan of the whole backlog.
    sent.length = 0;
    expect(await claim(randomUUID(), [], null)).toEqual([]);
    expect(await claim(randomUUID(), [], null)).toEqual([]);
    expect(heads()).toBe(2);
  });

  it('rolls the folded try back when a carried mark is not written, and takes nothing behind it', async () => {
    const { claim, first, sent, status } = await claimedHeads();
    const second = await claim(
      randomUUID(),
      first.map((row) => row.id),
      randomUUID(),
    );
    expect(second).toEqual([]);
    expect(sent.filter((statement) => statement === 'ROLLBACK')).toHaveLength(1);
    expect(await status()).toEqual(['PROCESSING', 'READY', 'PROCESSING', 'READY']);
  });
});
