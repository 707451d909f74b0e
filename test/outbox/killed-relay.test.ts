/**
 * A relay process killed with SIGKILL while it holds a lease ("after commit,
 * before publish"): its rows stay PROCESSING until the lease expires, then another relay
 * publishes them. Real PostgreSQL and MariaDB, real separate process.
 */
import { spawnTypeScript } from '../support/typescript-child.js';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordingPublisher, createOutboxRelay, writeOutboxEvent } from 'evgen/runtime';
import {
  manualClock,
  openOutbox,
  outboxRows,
  pgliteOnce,
  type OutboxFixture,
} from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const child = fileURLToPath(new URL('./support/relay-child.ts', import.meta.url));

describe.each(['postgres', 'mariadb'] as const)(
  'a relay process killed while holding a lease on %s',
  (dialect) => {
    let fixture: OutboxFixture | undefined;
    afterEach(async () => {
      await fixture?.close();
      fixture = undefined;
    });

    it('leaves rows that another relay reclaims after the lease and publishes once', async () => {
      const f = (fixture = await openOutbox(dialect, pgliteOnce()));
      const written = await f.db.transaction(async (tx) => [
        await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'a', amount: 1 },
          {},
          { schema: f.schema, notifyChannel: false },
        ),
        await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'a', amount: 2 },
          {},
          { schema: f.schema, notifyChannel: false },
        ),
        await writeOutboxEvent(
          tx,
          orderPlacedV1,
          { orderId: 'b', amount: 3 },
          {},
          { schema: f.schema, notifyChannel: false },
        ),
      ]);
      const leaseMs = 60_000;
      const proc = spawnTypeScript(child, [f.url!, f.schema, String(leaseMs)], 'ignore');
      let stderr = '';
      proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        proc.on('exit', (_code, signal) => resolve(signal)),
      );
      await new Promise<void>((resolve, reject) => {
        proc.stdout.on('data', (chunk: Buffer) =>
          chunk.toString().includes('publishing') ? resolve() : undefined,
        );
        proc.on('exit', (code) =>
          reject(new Error(`relay child exited early (${code}): ${stderr}`)),
        );
      });
      proc.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');

      const stranded = await outboxRows(f);
      expect(stranded.map((r) => r.status)).toEqual(['PROCESSING', 'PROCESSING', 'PROCESSING']);
      const clock = manualClock();
      const publisher = new RecordingPublisher();
      const survivor = createOutboxRelay({
        db: f.openAnother(),
        publisher,
        schema: f.schema,
        clock: clock.clock,
        notifyChannel: false,
      });
      // While the dead relay's lease runs, nobody may take its rows.
      expect(await survivor.runOnce()).toMatchObject({ claimed: 0 });
      clock.advance(leaseMs);
      expect(await survivor.runOnce()).toMatchObject({ claimed: 3, published: 3 });
      expect(publisher.published.map((m) => m.envelope.messageId).sort()).toEqual(
        written.map((e) => e.messageId).sort(),
      );
      const aOrder = publisher.published
        .filter((m) => m.envelope.aggregateId === 'a')
        .map((m) => m.envelope.messageId);
      expect(aOrder).toEqual([written[0]!.messageId, written[1]!.messageId]);
      const rows = await outboxRows(f);
      expect(rows.map((r) => [r.status, r.attempts])).toEqual([
        ['SENT', 2],
        ['SENT', 2],
        ['SENT', 2],
      ]);
    });
  },
);
