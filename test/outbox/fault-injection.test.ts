/**
 * Outbox-side fault injection, on the real PostgreSQL and the real MariaDB (one test body, each
 * dialect), with a real service process SIGKILLed at each point of the acceptance matrix:
 *   after the business write / after the outbox write (both before commit) → neither row exists;
 *   after commit, before publish → both rows, READY; a restarted relay publishes it exactly once;
 *   after the broker confirm, before SENT → published again after the lease with the same
 *     messageId, and the consumer's inbox handles it once;
 *   after SENT → no relay ever claims or publishes it again.
 * The child prints a marker at the kill point and waits on stdin; the parent kills it on the
 * marker, so nothing depends on timing. Publishes go to a `published` table, so what a killed
 * process published stays visible.
 */
import { spawnTypeScript } from '../support/typescript-child.js';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createOutboxRelay,
  handleWithInbox,
  migrateInbox,
  writeOutboxEvent,
  type Database,
  type RelayBatchResult,
} from 'evgen/runtime';
import {
  manualClock,
  openOutbox,
  pgliteOnce,
  type DialectName,
  type OutboxFixture,
} from './support/dialects.js';
import { dialectOf } from '../../src/runtime/db/sql-dialect.js';
import {
  createFaultTables,
  databasePublisher,
  faultTables,
  insertInvoice,
  invoiceIssuedV1,
  params,
  publishedRecords,
  reachedMarker,
  type FaultPoint,
} from './support/fault-points.js';

// Each test starts up to three Node + tsx children (~10 s each); on shared cores that passes 60 s.
vi.setConfig({ testTimeout: 180_000 });

const service = fileURLToPath(new URL('./support/fault-service.ts', import.meta.url));
/** Long enough that no lease expires on its own during a test; the relays' clocks are moved by hand. */
const LEASE_MS = 60_000;

/** The service runs in its own process, so only the server dialects (PGlite lives in this one). */
const SERVER_DIALECTS: readonly DialectName[] = ['postgres', 'mariadb'];

describe.each(SERVER_DIALECTS)(
  'a producing service killed at each point of the outbox matrix (real %s, SIGKILL)',
  (dialect) => {
    let fixture: OutboxFixture;
    let db: Database;
    let schema: string;
    beforeEach(async () => {
      fixture = await openOutbox(dialect, pgliteOnce());
      schema = fixture.schema;
      db = fixture.db;
      await migrateInbox(db, { schema });
      await createFaultTables(db, schema);
    });
    afterEach(async () => {
      await fixture?.close();
    });

    interface Ids {
      invoiceId: string;
      messageId: string;
    }

    function newIds(): Ids {
      return { invoiceId: `inv-${randomUUID()}`, messageId: randomUUID() };
    }

    function spawnService(mode: FaultPoint | 'restart', ids: Ids) {
      return spawnTypeScript(service, [
        fixture.url!,
        schema,
        mode,
        ids.invoiceId,
        ids.messageId,
        String(LEASE_MS),
      ]);
    }

    /** Runs the service until it reports `point`, SIGKILLs it there and waits until it is gone. */
    function killServiceAt(point: FaultPoint, ids: Ids): Promise<void> {
      return new Promise((resolve, reject) => {
        const proc = spawnService(point, ids);
        let stdout = '';
        let stderr = '';
        let killed = false;
        proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        proc.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (!killed && stdout.split('\n').includes(reachedMarker(point))) {
            killed = true;
            proc.kill('SIGKILL');
          }
        });
        proc.on('exit', (code, signal) =>
          killed && signal === 'SIGKILL'
            ? resolve()
            : reject(
                new Error(
                  `service exited before ${point} (code ${code}, signal ${signal}): ${stdout}${stderr}`,
                ),
              ),
        );
      });
    }

    /** Starts a fresh service process that only relays one round, as after a restart. */
    function restartRelay(): Promise<RelayBatchResult> {
      return new Promise((resolve, reject) => {
        const proc = spawnService('restart', { invoiceId: '-', messageId: '-' });
        proc.stdin.end();
        let stdout = '';
        let stderr = '';
        proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        proc.on('exit', (code) => {
          const line = stdout.split('\n').find((l) => l.startsWith('relayed '));
          if (code === 0 && line)
            resolve(JSON.parse(line.slice('relayed '.length)) as RelayBatchResult);
          else reject(new Error(`restarted relay failed (code ${code}): ${stdout}${stderr}`));
        });
      });
    }

    async function count(table: string, where: string, values: unknown[]): Promise<number> {
      const result = await db.query<{ n: number | string }>(
        params(db, `SELECT count(*) AS n FROM ${table} WHERE ${where}`),
        values,
      );
      return Number(result.rows[0]!.n);
    }

    const outboxTable = () => dialectOf(db).qualifiedName(schema, 'outbox_event');
    const invoiceRows = (ids: Ids) =>
      count(faultTables(db, schema).invoices, 'invoice_id = $1', [ids.invoiceId]);
    const outboxRowCount = (ids: Ids) => count(outboxTable(), 'event_id = $1', [ids.messageId]);

    async function outboxRow(
      ids: Ids,
    ): Promise<{ status: string; attempts: number; sent_at: string | null }> {
      const sentAt = dialect === 'mariadb' ? 'CAST(sent_at AS CHAR)' : 'sent_at::text';
      const result = await db.query<{ status: string; attempts: number; sent_at: string | null }>(
        params(
          db,
          `SELECT status, attempts, ${sentAt} AS sent_at FROM ${outboxTable()} WHERE event_id = $1`,
        ),
        [ids.messageId],
      );
      expect(result.rows).toHaveLength(1);
      const row = result.rows[0]!;
      return { ...row, attempts: Number(row.attempts) };
    }

    /** A relay in this process with a hand-moved clock, publishing to the same `published` table. */
    function survivingRelay(clock: () => Date) {
      const publisher = databasePublisher(db, schema, 'survivor');
      return createOutboxRelay({
        db: fixture.openAnother(2),
        publisher,
        schema,
        clock,
        notifyChannel: false,
      });
    }

    /**
     * Proves the killed transaction was rolled back rather than merely invisible: writing the same
     * invoice and the same event id waits for the killed transaction's row locks and succeeds only
     * if it did not commit, and the aggregate version counter was not advanced by it. The probe
     * itself is rolled back.
     */
    async function expectIdsFreeAgain(ids: Ids): Promise<void> {
      let probeVersion: number | undefined;
      const probeRolledBack = new Error('probe rolled back');
      await expect(
        db.transaction(async (tx) => {
          // A safety net against a hung test, not an assertion on timing.
          await tx.query(
            dialect === 'mariadb'
              ? 'SET SESSION innodb_lock_wait_timeout = 20'
              : `SET LOCAL lock_timeout = '20s'`,
          );
          const payload = { invoiceId: ids.invoiceId, amount: 1 };
          await insertInvoice(tx, schema, payload);
          const envelope = await writeOutboxEvent(
            tx,
            invoiceIssuedV1,
            payload,
            { messageId: ids.messageId },
            { schema, notifyChannel: false, assignAggregateVersion: true },
          );
          probeVersion = envelope.aggregateVersion;
          throw probeRolledBack;
        }),
      ).rejects.toBe(probeRolledBack);
      expect(probeVersion).toBe(1);
    }

    it.each(['after-business-write', 'after-outbox-write'] as const)(
      'killed %s (before commit): neither the business row nor the outbox row exists',
      async (point) => {
        const ids = newIds();
        await killServiceAt(point, ids);
        await expectIdsFreeAgain(ids);
        expect(await invoiceRows(ids)).toBe(0);
        expect(await outboxRowCount(ids)).toBe(0);
        // Nothing for a relay to publish, and nothing was published.
        expect(await restartRelay()).toMatchObject({ claimed: 0, published: 0 });
        expect(await publishedRecords(db, schema)).toEqual([]);
      },
    );

    it('killed after commit, before publish: both rows exist READY; the restarted relay publishes it exactly once', async () => {
      const ids = newIds();
      await killServiceAt('after-commit', ids);
      expect(await invoiceRows(ids)).toBe(1);
      expect(await outboxRow(ids)).toMatchObject({ status: 'READY', attempts: 0, sent_at: null });
      expect(await publishedRecords(db, schema)).toEqual([]);

      expect(await restartRelay()).toMatchObject({ claimed: 1, published: 1, failed: 0, dead: 0 });
      expect(await outboxRow(ids)).toMatchObject({ status: 'SENT', attempts: 1 });
      // A second restart finds nothing: one publish in total.
      expect(await restartRelay()).toMatchObject({ claimed: 0, published: 0 });
      const published = await publishedRecords(db, schema);
      expect(published.map((p) => [p.message_id, p.publisher])).toEqual([
        [ids.messageId, 'restarted-relay'],
      ]);
      expect(published[0]!.envelope).toMatchObject({
        messageId: ids.messageId,
        eventType: 'test.InvoiceIssued',
        aggregateId: ids.invoiceId,
        aggregateVersion: 1,
        payload: { invoiceId: ids.invoiceId, amount: 42 },
      });
    });

    it('killed after the broker confirm, before SENT: published again after the lease with the same messageId, handled once', async () => {
      const ids = newIds();
      await killServiceAt('after-confirm', ids);
      expect((await publishedRecords(db, schema)).map((p) => [p.message_id, p.publisher])).toEqual([
        [ids.messageId, 'service'],
      ]);
      // The database does not know about the confirm: the row is still leased to the dead relay.
      expect(await outboxRow(ids)).toMatchObject({
        status: 'PROCESSING',
        attempts: 1,
        sent_at: null,
      });

      const clock = manualClock();
      const survivor = survivingRelay(clock.clock);
      expect(await survivor.runOnce()).toMatchObject({ claimed: 0 });
      clock.advance(LEASE_MS);
      expect(await survivor.runOnce()).toMatchObject({ claimed: 1, published: 1 });
      expect(await outboxRow(ids)).toMatchObject({ status: 'SENT', attempts: 2 });

      // At-least-once: the broker holds two identical copies under one messageId.
      const published = await publishedRecords(db, schema);
      expect(published.map((p) => [p.message_id, p.publisher])).toEqual([
        [ids.messageId, 'service'],
        [ids.messageId, 'survivor'],
      ]);
      expect(published[1]!.envelope).toEqual(published[0]!.envelope);

      // The consumer's inbox absorbs the duplicate: one business effect.
      const outcomes = [];
      for (const { envelope } of published) {
        outcomes.push(
          await handleWithInbox(db, { schema, consumer: 'billing', envelope }, async (tx, e) => {
            await tx.query(
              params(
                tx,
                `INSERT INTO ${faultTables(tx, schema).effects} (message_id, invoice_id) VALUES ($1, $2)`,
              ),
              [e.messageId, e.aggregateId],
            );
          }),
        );
      }
      expect(outcomes).toEqual(['handled', 'duplicate']);
      expect(await count(faultTables(db, schema).effects, 'message_id = $1', [ids.messageId])).toBe(
        1,
      );
    });

    it('killed after SENT: no relay ever claims or publishes the event again', async () => {
      const ids = newIds();
      await killServiceAt('after-sent', ids);
      const sent = await outboxRow(ids);
      expect(sent).toMatchObject({ status: 'SENT', attempts: 1 });
      expect(sent.sent_at).not.toBeNull();

      expect(await restartRelay()).toMatchObject({ claimed: 0, published: 0 });
      // Not even once every lease and backoff has long expired.
      const clock = manualClock();
      clock.advance(24 * 60 * 60 * 1000);
      expect(await survivingRelay(clock.clock).runOnce()).toMatchObject({
        claimed: 0,
        published: 0,
      });
      expect((await publishedRecords(db, schema)).map((p) => [p.message_id, p.publisher])).toEqual([
        [ids.messageId, 'service'],
      ]);
      expect(await outboxRow(ids)).toEqual(sent);
    });
  },
);
