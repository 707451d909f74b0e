/**
 * How deep a claim goes behind its heads and when it splits (ClaimedBatch's rules), on every
 * dialect and both of PostgreSQL's ways of finding heads: with fewer heads than the batch, each
 * head's run goes up to ceil(batch / half) rows deep; when those rows are more than the batch, the
 * claim takes the earlier half of the heads and leaves the rest to another claim; a claim that saw
 * due rows it left says so (`moreDue`), and the relay then claims again at once instead of waiting
 * out its poll interval.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  writeOutboxEvent,
  type OutboundMessage,
  type Publisher,
} from 'evgen/runtime';
import { waitFor } from '../support/wait-for.js';
import {
  CLAIM_CASES,
  DIALECTS,
  openOutbox,
  outboxClaims,
  outboxRows,
  pgliteOnce,
  type OutboxFixture,
  writeOrders,
} from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

/** `count` rows of each aggregate, written round robin (a, b, c, a, b, c, …). */
const interleaved = (aggregates: readonly string[], count: number) =>
  Array.from({ length: count }, () => aggregates).flat();

describe.each(CLAIM_CASES)(
  'claim depth and split on $dialect, $heads',
  ({ dialect, fewAggregates }) => {
    let fixture: OutboxFixture | undefined;
    afterEach(async () => {
      await fixture?.close();
      fixture = undefined;
    });

    async function outbox(orderIds: readonly string[]) {
      const f = (fixture = await openOutbox(dialect, pglite));
      await writeOrders(f, orderIds);
      const claims = outboxClaims(f, fewAggregates);
      // Each row as its aggregate and its place in that aggregate's run (a1, a2, …).
      const places = new Map<number, string>();
      const runs = new Map<string, number>();
      for (const row of await outboxRows(f)) {
        const place = (runs.get(row.aggregate_id) ?? 0) + 1;
        runs.set(row.aggregate_id, place);
        places.set(row.id, `${row.aggregate_id}${place}`);
      }
      const claim = async (batchSize: number, split = true) => {
        const { rows, moreDue } = await claims.claim(batchSize, { split });
        return { rows: rows.map((row) => places.get(Number(row.id))!).sort(), moreDue };
      };
      return { claim };
    }

    it('splits when the free aggregates have more due rows than the batch: the earlier half, deeper; the next claims take the rest', async () => {
      const { claim } = await outbox(interleaved(['a', 'b', 'c', 'd'], 5));
      // 4 heads < 6: half 2, depth 3; 4 × 3 rows > 6, so a and b only, 3 rows each.
      expect(await claim(6)).toEqual({ rows: ['a1', 'a2', 'a3', 'b1', 'b2', 'b3'], moreDue: true });
      // c and d are free (a and b are held): half 1, depth 6; 10 rows > 6, so c alone, all 5.
      expect(await claim(6)).toEqual({ rows: ['c1', 'c2', 'c3', 'c4', 'c5'], moreDue: true });
      // d alone fits.
      expect(await claim(6)).toEqual({ rows: ['d1', 'd2', 'd3', 'd4', 'd5'], moreDue: false });
    });

    it('does not split unless the request allows it: every head, position by position', async () => {
      const { claim } = await outbox(interleaved(['a', 'b', 'c', 'd'], 5));
      expect(await claim(6, false)).toEqual({
        rows: ['a1', 'a2', 'b1', 'b2', 'c1', 'd1'],
        moreDue: true,
      });
    });

    it('takes every free aggregate when their due rows fit the batch, and says nothing more is due', async () => {
      const { claim } = await outbox(interleaved(['a', 'b', 'c'], 2));
      expect(await claim(10)).toEqual({
        rows: ['a1', 'a2', 'b1', 'b2', 'c1', 'c2'],
        moreDue: false,
      });
    });

    it('with as many heads as the batch, takes the heads alone (the batch is full)', async () => {
      const { claim } = await outbox(interleaved(['a', 'b', 'c'], 2));
      expect(await claim(3)).toEqual({ rows: ['a1', 'b1', 'c1'], moreDue: false });
    });

    it('says more is due when it cut a run short of the batch', async () => {
      // 3 heads < 10: half 2, depth 5; a's run is cut at 5, and 7 rows do not fill the batch.
      const { claim } = await outbox(['a', 'b', 'c', ...Array<string>(9).fill('a')]);
      expect(await claim(10)).toEqual({
        rows: ['a1', 'a2', 'a3', 'a4', 'a5', 'b1', 'c1'],
        moreDue: true,
      });
    });
  },
);

describe.each(DIALECTS)('relay draining runs cut short on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });

  it('claims again at once after a claim that left due rows, not after its poll interval', async () => {
    const f = (fixture = await openOutbox(dialect, pglite));
    // Each claim of 10 takes 5 of a's rows, b's and c's: 7 rows, the batch not full.
    const written = await writeOrders(f, ['a', 'b', 'c', ...Array<string>(29).fill('a')]);
    const published: string[] = [];
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const publisher: Publisher = {
      publish: async (message: OutboundMessage) => {
        published.push(message.envelope.messageId);
        if (published.length === written.length) done();
      },
    };
    const relay = createOutboxRelay({
      db: f.db,
      schema: f.schema,
      notifyChannel: false,
      publisher,
      batchSize: 10,
      // Longer than the test's timeout: a lane that waited for it would never finish.
      pollIntervalMs: 600_000,
      minPollIntervalMs: 600_000,
    });
    try {
      await relay.start();
      await all;
    } finally {
      await relay.stop();
    }
    const ofA = [written[0], ...written.slice(3)];
    expect(published.filter((id) => ofA.includes(id))).toEqual(ofA);
    expect([...published].sort()).toEqual([...written].sort());
    expect((await outboxRows(f)).every((row) => row.status === 'SENT')).toBe(true);
  }, 20_000);

  it("a lane claims without splitting while the other lane's batch is being published", async () => {
    const f = (fixture = await openOutbox(dialect, pglite));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const started: string[] = [];
    // A chain publisher: the relay splits claims only for one (see relay-batch).
    const publisher: Publisher = {
      publish: async (message: OutboundMessage) => {
        started.push(message.envelope.aggregateId);
        await gate;
      },
      publishChain: async (messages: readonly OutboundMessage[]) => {
        started.push(...messages.map((message) => message.envelope.aggregateId));
        await gate;
        return messages.map(() => ({ stored: true as const }));
      },
    };
    const relay = createOutboxRelay({
      db: f.db,
      schema: f.schema,
      notifyChannel: false,
      publisher,
      batchSize: 6,
      pollIntervalMs: 50,
      minPollIntervalMs: 10,
    });
    const processing = async () =>
      (await outboxRows(f))
        .filter((row) => row.status === 'PROCESSING')
        .map((row) => row.aggregate_id);
    try {
      await writeOrders(f, Array<string>(5).fill('a'));
      await relay.start();
      // One lane holds a's rows, its publish held at the gate.
      await waitFor('a publish held', () => (started.length > 0 ? true : undefined));
      // b's and c's rows in one transaction, so the other lane's next claim sees them all.
      await f.db.transaction(async (tx) => {
        for (const [amount, orderId] of interleaved(['b', 'c'], 5).entries())
          await writeOutboxEvent(tx, orderPlacedV1, { orderId, amount }, {}, { schema: f.schema });
      });
      await waitFor('b and c claimed', async () =>
        (await processing()).some((id) => id !== 'a') ? true : undefined,
      );
      // Not split (that would be b's five rows alone): both aggregates, three rows each.
      expect((await processing()).filter((id) => id !== 'a').sort()).toEqual([
        'b',
        'b',
        'b',
        'c',
        'c',
        'c',
      ]);
    } finally {
      open();
      await relay.stop();
    }
  }, 20_000);
});
