/**
 * The relay's adaptive idle polling on the real MariaDB, where no NOTIFY exists: while nothing
 * is due the wait grows to `pollIntervalMs` and no further; a row committed on a connection evgen
 * does not see (as another process's would be: no in-process wake) is published by polling, no
 * wait exceeding the ceiling; work found brings the wait back to
 * `minPollIntervalMs`; a wake-up still ends a wait at once. No timing is asserted: the waits are the relay's own choice,
 * reported by its `onIdle` hook (latency is measured in `npm run bench`).
 */
import mysql from 'mysql2/promise';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  RecordingPublisher,
  createOutboxRelay,
  mysqlTransaction,
  writeOutboxEvent,
  type OutboxRelay,
  type RelayBatchResult,
} from 'evgen/runtime';
import { RELAY_LANES } from '../../src/runtime/outbox/relay-loop.js';
import { openOutbox, outboxRows, type OutboxFixture } from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const FLOOR_MS = 20;
const CEILING_MS = 200;

describe('adaptive idle polling on MariaDB', () => {
  let fixture: OutboxFixture;
  let relay: OutboxRelay | undefined;
  let publisher: RecordingPublisher;
  /** Every idle wait the relay chose, in order. */
  let waits: number[];
  /** Every batch's result, in order. */
  let batches: RelayBatchResult[];
  let onIdle: (() => void) | undefined;

  beforeEach(async () => {
    fixture = await openOutbox('mariadb', { get: () => Promise.reject(new Error('unused')) });
    publisher = new RecordingPublisher();
    waits = [];
    batches = [];
    onIdle = undefined;
  });

  async function startRelay(minPollIntervalMs = FLOOR_MS, pollIntervalMs = CEILING_MS) {
    relay = createOutboxRelay({
      db: fixture.db,
      schema: fixture.schema,
      publisher,
      notifyChannel: fixture.channel,
      minPollIntervalMs,
      pollIntervalMs,
      hooks: {
        onIdle: (ms) => {
          waits.push(ms);
          onIdle?.();
        },
        onBatch: (result) => batches.push(result),
      },
    });
    await relay.start();
  }
  afterEach(async () => {
    await relay?.stop();
    await fixture?.close();
  });

  /**
   * Resolves once the relay has chosen `count` idle waits that satisfy `accept` since the
   * `from`-th (default: from now on).
   */
  function idleWaits(
    count: number,
    accept: (ms: number) => boolean,
    from = waits.length,
  ): Promise<void> {
    return new Promise((resolve) => {
      const check = () => {
        if (waits.slice(from).filter(accept).length >= count) {
          onIdle = undefined;
          resolve();
        }
      };
      onIdle = check;
      check();
    });
  }

  it('backs off from the floor to the ceiling while idle, never beyond', async () => {
    await startRelay();
    // Both lanes at the ceiling, twice each.
    await idleWaits(4, (ms) => ms === CEILING_MS);
    const seen = [...waits];
    expect(seen.every((ms) => ms >= FLOOR_MS && ms <= CEILING_MS)).toBe(true);
    // Each lane's schedule starts at the floor and doubles: 20, 40, 80, 160, then 200.
    for (const ms of [20, 40, 80, 160]) {
      expect(seen.filter((wait) => wait === ms)).toHaveLength(2);
    }
    expect(batches.every((batch) => batch.claimed === 0)).toBe(true);
  });

  it('publishes a row committed where no wake-up reaches the relay by polling, then polls from the floor again', async () => {
    await startRelay();
    await idleWaits(2, (ms) => ms === CEILING_MS);
    // A connection of its own with a transaction evgen does not run: no commit hook, no wake-up,
    // exactly what a writer in another process looks like to this relay.
    const connection = await mysql.createConnection(fixture.url!);
    let messageId: string;
    let batchesBefore: number;
    let waitsBefore: number;
    try {
      await connection.beginTransaction();
      messageId = (
        await writeOutboxEvent(
          mysqlTransaction(connection),
          orderPlacedV1,
          { orderId: 'order-polled', amount: 7 },
          {},
          { schema: fixture.schema, notifyChannel: fixture.channel },
        )
      ).messageId;
      batchesBefore = batches.length;
      waitsBefore = waits.length;
      await connection.commit();
    } finally {
      await connection.end();
    }
    await publisher.waitForPublished(1);
    expect(publisher.published.map((message) => message.envelope.messageId)).toEqual([messageId]);

    // The lane that found work waits the floor next (its batch has ended by then).
    await idleWaits(1, (ms) => ms === FLOOR_MS, waitsBefore);
    expect(batches.slice(batchesBefore).some((batch) => batch.claimed === 1)).toBe(true);
    // No idle wait longer than the ceiling was ever chosen, so no claim came later than one
    // ceiling after the commit.
    expect(Math.max(...waits)).toBe(CEILING_MS);
    expect((await outboxRows(fixture)).map((row) => row.status)).toEqual(['SENT']);
  });

  it("a wake-up ends an idle wait: with polls ten minutes apart, a write committed in the relay's process is published", async () => {
    const TEN_MINUTES = 600_000;
    await startRelay(TEN_MINUTES, TEN_MINUTES);
    await idleWaits(RELAY_LANES, (ms) => ms === TEN_MINUTES);
    await fixture.db.transaction((tx) =>
      writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId: 'order-woken', amount: 8 },
        {},
        { schema: fixture.schema, notifyChannel: fixture.channel },
      ),
    );
    // Only the wake-up can bring this about before the test's timeout.
    await publisher.waitForPublished(1);
    await relay!.stop(); // writes the SENT mark it still carries
    relay = undefined;
    expect((await outboxRows(fixture)).map((row) => row.status)).toEqual(['SENT']);
  });
});
