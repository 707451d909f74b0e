/**
 * The relay with a publisher that takes an aggregate's rows together (`publishChain`, as Kafka's
 * does), on every dialect: each aggregate's claimed rows go in one call, in id order, cut to the
 * in-flight window; after a row that fails, the rows before it are SENT, it backs off, and the
 * rows after it are given back untried, so the aggregate's order holds when they go again.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createOutboxRelay,
  type ChainPublishResult,
  type OutboundMessage,
  type OutboxRelayOptions,
  type Publisher,
} from 'evgen/runtime';
import {
  DIALECTS,
  manualClock,
  openOutbox,
  outboxRows,
  pgliteOnce,
  type OutboxFixture,
  writeOrders,
} from './support/dialects.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

/** Keeps each call's messageIds; `fails` decides, per message, an error to fail it with. */
class ChainRecordingPublisher implements Publisher {
  readonly calls: string[][] = [];
  readonly stored: string[] = [];
  constructor(private readonly fails: (message: OutboundMessage) => Error | undefined) {}

  async publish(message: OutboundMessage): Promise<void> {
    const [result] = await this.publishChain([message]);
    if (!result!.stored) throw result!.error;
  }

  async publishChain(messages: readonly OutboundMessage[]): Promise<ChainPublishResult[]> {
    this.calls.push(messages.map((message) => message.envelope.messageId));
    let failed = false;
    return messages.map((message) => {
      if (failed) return { stored: false, error: new Error('held back behind a failed one') };
      const error = this.fails(message);
      if (error !== undefined) {
        failed = true;
        return { stored: false, error };
      }
      this.stored.push(message.envelope.messageId);
      return { stored: true };
    });
  }
}

describe.each(DIALECTS)('relay with a chain publisher on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  const open = async () => (fixture = await openOutbox(dialect, pglite));
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });
  const relayFor = (f: OutboxFixture, rest: Omit<OutboxRelayOptions, 'db' | 'schema'>) =>
    createOutboxRelay({ db: f.db, schema: f.schema, notifyChannel: f.channel, ...rest });

  it("hands each aggregate's claimed rows over in one call, in id order, and marks them SENT", async () => {
    const f = await open();
    const [a1, b1, a2, c1, a3, b2, a4] = await writeOrders(f, ['a', 'b', 'a', 'c', 'a', 'b', 'a']);
    const publisher = new ChainRecordingPublisher(() => undefined);
    const relay = relayFor(f, { publisher, batchSize: 100 });
    expect(await relay.runOnce()).toMatchObject({ claimed: 7, published: 7, released: 0 });
    expect([...publisher.calls].sort((x, y) => y.length - x.length)).toEqual([
      [a1, a2, a3, a4],
      [b1, b2],
      [c1],
    ]);
    expect((await outboxRows(f)).every((row) => row.status === 'SENT')).toBe(true);
  });

  it('cuts a chain to the in-flight window: with maxInFlight 2, five rows go as 2 + 2 + 1, in order', async () => {
    const f = await open();
    const ids = await writeOrders(f, ['a', 'a', 'a', 'a', 'a']);
    const publisher = new ChainRecordingPublisher(() => undefined);
    const relay = relayFor(f, { publisher, batchSize: 100, maxInFlight: 2 });
    expect(await relay.runOnce()).toMatchObject({ claimed: 5, published: 5 });
    expect(publisher.calls).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
  });

  it('after a row that fails: the rows before it SENT, it backs off, the rows after it given back untried; then in order', async () => {
    const f = await open();
    const [a1, b1, a2, a3] = await writeOrders(f, ['a', 'b', 'a', 'a']);
    const clock = manualClock();
    const publisher = new ChainRecordingPublisher((message) =>
      message.envelope.messageId === a2 && message.attempts === 0
        ? new Error('broker unavailable')
        : undefined,
    );
    const relay = relayFor(f, {
      publisher,
      clock: clock.clock,
      random: () => 0,
      backoff: { baseMs: 1_000, capMs: 60_000, jitter: 0 },
    });
    expect(await relay.runOnce()).toEqual({
      claimed: 4,
      published: 2,
      failed: 1,
      dead: 0,
      released: 1,
    });
    expect(publisher.stored.sort()).toEqual([a1, b1].sort());
    const rows = await outboxRows(f);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['SENT', 1],
      ['SENT', 1],
      ['READY', 1],
      ['READY', 0],
    ]);
    expect(rows[2]!.last_error).toContain('broker unavailable');
    // Backing off: a3 is READY and due, but waits behind a2.
    expect(await relay.runOnce()).toMatchObject({ claimed: 0 });
    clock.advance(1_000);
    expect(await relay.runOnce()).toMatchObject({ claimed: 2, published: 2 });
    expect(publisher.calls.at(-1)).toEqual([a2, a3]);
    expect(publisher.stored.slice(2)).toEqual([a2, a3]);
  });
});
