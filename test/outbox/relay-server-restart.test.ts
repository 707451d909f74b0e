/**
 * The MariaDB server restarted under a running relay, on a private mariadbd (the shared server on
 * 3306 is never touched): a clean shutdown (SIGTERM) and a crash (SIGKILL, InnoDB crash recovery
 * at the next start). Rows are written every 20 ms over 4 aggregates before, during and after,
 * and confirms take 50 ms, so claims, publishes and SENT marks are in flight when the server goes;
 * the server stays away until the relay has reported it gone, so the outage is always felt.
 * Pass: no crash of the relay, every committed row published exactly once, in order per
 * aggregate, every row committed before the server came back published within 10 s of it.
 *
 * The writer retries a failed write with the same messageId: a commit whose answer was lost
 * (the server died in between) either happened — the retry hits the unique event_id — or did not.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  migrateOutbox,
  mysqlDatabase,
  writeOutboxEvent,
  type Database,
} from 'evgen/runtime';
import { uuidV7 } from '../../src/runtime/uuid-v7.js';
import { mariadbPool } from '../support/mariadb.js';
import { startPrivateMariadb, type PrivateMariadb } from '../support/mariadb-private.js';
import { uniqueName } from '../support/postgres.js';
import { waitFor } from '../support/wait-for.js';
import {
  nonTransientErrors,
  publishedFor,
  recovery,
  slowRecordingPublisher,
} from './support/fault-recovery.js';
import { orderPlacedV1 } from './support/test-event.js';

const RECOVERY_LIMIT_MS = 10_000;
const AGGREGATES = ['o0', 'o1', 'o2', 'o3'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let server: PrivateMariadb;
beforeAll(async () => {
  server = await startPrivateMariadb();
}, 120_000);
afterAll(async () => {
  await server?.destroy();
});

/** A database of its own on the private server, and pools to it (ended by `close`). */
async function openSchema() {
  const schema = uniqueName('evgen_restart');
  const admin = await mysql.createConnection(server.url);
  await admin.query(`CREATE DATABASE \`${schema}\` DEFAULT CHARACTER SET utf8mb4`);
  await admin.end();
  const url = server.url.replace(/\/[^/]*$/, `/${schema}`);
  const pools: mysql.Pool[] = [];
  const database = (max: number): Database => {
    const pool = mariadbPool(url, max);
    pools.push(pool);
    return mysqlDatabase(pool);
  };
  return {
    schema,
    database,
    async close() {
      await Promise.all(pools.map((pool) => pool.end().catch(() => undefined)));
    },
  };
}

/** Writes one event, retrying with the same messageId until it is surely committed once. */
async function writeSurely(db: Database, schema: string, orderId: string): Promise<string> {
  const messageId = uuidV7();
  for (;;) {
    try {
      await db.transaction((tx) =>
        writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId, amount: 1 },
          { messageId },
          { schema, notifyChannel: false },
        ),
      );
      return messageId;
    } catch (error) {
      // An earlier try committed although its answer was lost.
      if ((error as { errno?: number }).errno === 1062) return messageId;
      await sleep(100);
    }
  }
}

describe('the MariaDB server restarted under a running relay (private mariadbd)', () => {
  it.each(['SIGTERM', 'SIGKILL'] as const)(
    'server stopped with %s and started again: every committed row published once, in order, soon after',
    async (signal) => {
      const test = await openSchema();
      const writerDb = test.database(2);
      await migrateOutbox(writerDb, { schema: test.schema });
      const publisher = slowRecordingPublisher(50);
      const publishedAt = new Map<string, number>();
      const errors: unknown[] = [];
      const relay = createOutboxRelay({
        db: test.database(4),
        schema: test.schema,
        publisher,
        notifyChannel: false,
        hooks: {
          onError: (error) => errors.push(error),
          onPublished: (message) => {
            if (!publishedAt.has(message.envelope.messageId))
              publishedAt.set(message.envelope.messageId, Date.now());
          },
        },
      });
      const written: { id: string; aggregate: string; at: number }[] = [];
      let writing = true;
      const writer = (async () => {
        for (let n = 0; writing; n++) {
          const aggregate = AGGREGATES[n % AGGREGATES.length]!;
          const id = await writeSurely(writerDb, test.schema, aggregate);
          written.push({ id, aggregate, at: Date.now() });
          await sleep(20);
        }
      })();
      await relay.start();
      try {
        await sleep(1_000);
        const stoppedAt = Date.now();
        await server.stop(signal);
        // The server stays away until the relay has felt it (a failed claim or mark), so the
        // outage always overlaps the relay's work, however quickly the server would come back.
        const errorsBefore = errors.length;
        await waitFor('the relay to report the server gone', () =>
          errors.length > errorsBefore ? true : undefined,
        );
        await server.start();
        const restartedAt = Date.now();
        await sleep(1_000);
        writing = false;
        await writer;
        // Every row in the table (committed, whatever its writer saw) must end SENT.
        const table = `\`${test.schema}\`.outbox_event`;
        const rowsIn = async () =>
          (
            await writerDb.query<{ event_id: string; aggregate_id: string; status: string }>(
              `SELECT event_id, aggregate_id, status FROM ${table} ORDER BY id`,
            )
          ).rows;
        const deadline = Date.now() + RECOVERY_LIMIT_MS + 30_000;
        while ((await rowsIn()).some((row) => row.status !== 'SENT')) {
          if (Date.now() > deadline) throw new Error('rows not SENT 40 s after the restart');
          await sleep(100);
        }
        const rows = await rowsIn();
        const waited = written.filter((row) => row.at < restartedAt);
        const { recoveryMs, caughtUpMs } = recovery(waited, publishedAt, restartedAt, AGGREGATES);
        const ids = publisher.published.map((m) => m.envelope.messageId);
        console.log(
          `[${signal}] server away ${restartedAt - stoppedAt} ms; ${rows.length} rows, ${ids.length} publishes, ${ids.length - new Set(ids).size} doubled, every aggregate moving again ${recoveryMs} ms and caught up ${caughtUpMs} ms after the return, ${errors.length} errors reported`,
        );
        // Nothing lost: every acknowledged write is in the table, every row was published.
        expect(rows.map((row) => row.event_id).sort()).toEqual(written.map((row) => row.id).sort());
        expect(ids.length).toBe(new Set(ids).size);
        expect([...ids].sort()).toEqual(rows.map((row) => row.event_id).sort());
        for (const aggregate of AGGREGATES) {
          expect(publishedFor(publisher.published, aggregate)).toEqual(
            rows.filter((row) => row.aggregate_id === aggregate).map((row) => row.event_id),
          );
        }
        expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
        // No error is a deterministic one (a deadlock 1213 is transient too).
        expect(nonTransientErrors(errors)).toEqual([]);
      } finally {
        writing = false;
        await writer;
        await relay.stop({ timeoutMs: 5_000 });
        await test.close();
      }
    },
    180_000,
  );
});
