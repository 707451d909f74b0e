/**
 * Bounded publishes (publishTimeoutMs) and a stop() that always ends (stop({ timeoutMs })).
 * Time is driven by hand (manualClock + manualTimers): nothing here waits for real seconds.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  OutboxPublishTimeoutError,
  createOutboxRelay,
  type Database,
  type OutboundMessage,
  type OutboxRelayOptions,
  type Publisher,
} from 'evgen/runtime';
import { classifyError } from '../../src/runtime/errors.js';
import { type PublishFailure } from '../../src/runtime/outbox/relay-options.js';
import {
  DIALECTS,
  manualClock,
  manualTimers,
  openOutbox,
  outboxRows,
  pgliteOnce,
  type OutboxFixture,
  writeOrders,
} from './support/dialects.js';
import { waitFor } from '../support/wait-for.js';

const pglite = pgliteOnce();
afterAll(() => pglite.close());

/**
 * Publishes the messages it is told to hold only when the test settles them (or never); the rest
 * at once. Records every call.
 */
class ControlledPublisher implements Publisher {
  readonly calls: OutboundMessage[] = [];
  readonly published: OutboundMessage[] = [];
  private readonly held = new Map<
    string,
    { resolve: () => void; reject: (error: unknown) => void }
  >();
  private callWaiters: { count: number; resolve: () => void }[] = [];

  constructor(private readonly hold: (message: OutboundMessage) => boolean) {}

  publish(message: OutboundMessage): Promise<void> {
    this.calls.push(message);
    for (const waiter of this.callWaiters.filter((w) => this.calls.length >= w.count))
      waiter.resolve();
    if (!this.hold(message)) {
      this.published.push(message);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      this.held.set(message.envelope.messageId, {
        resolve: () => {
          this.published.push(message);
          resolve();
        },
        reject,
      });
    });
  }

  /** Settles a held publish, long after the relay stopped waiting for it. */
  settleLate(messageId: string, error?: unknown): void {
    const held = this.held.get(messageId);
    if (!held) throw new Error(`no held publish for ${messageId}`);
    if (error === undefined) held.resolve();
    else held.reject(error);
  }

  waitForCalls(count: number): Promise<void> {
    if (this.calls.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.callWaiters.push({ count, resolve }));
  }
}

/** Lets every pending callback and I/O completion run (no time passes on the manual clock). */
async function settleIo(f: OutboxFixture): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    await f.db.query('SELECT 1');
  }
}

describe('outbox relay options', () => {
  const db = {} as Database;
  const publisher: Publisher = { publish: () => Promise.resolve() };

  it('refuses a publishTimeoutMs that is not shorter than leaseMs', () => {
    expect(() =>
      createOutboxRelay({ db, publisher, leaseMs: 1_000, publishTimeoutMs: 1_000 }),
    ).toThrow(/publishTimeoutMs must be less than leaseMs \(1000\).*got 1000$/);
    expect(() =>
      createOutboxRelay({ db, publisher, leaseMs: 1_000, publishTimeoutMs: 5_000 }),
    ).toThrow(RangeError);
    expect(() => createOutboxRelay({ db, publisher, publishTimeoutMs: 0 })).toThrow(
      /publishTimeoutMs must be a positive number/,
    );
    // The default (half the lease) is always valid, also for a short lease.
    expect(() => createOutboxRelay({ db, publisher, leaseMs: 10 })).not.toThrow();
  });

  it('refuses a negative stop timeout', async () => {
    const relay = createOutboxRelay({ db, publisher });
    await expect(relay.stop({ timeoutMs: -1 })).rejects.toThrow(
      /timeoutMs must be a non-negative number/,
    );
  });
});

describe.each(DIALECTS)('outbox relay timeouts on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  const open = async () => (fixture = await openOutbox(dialect, pglite));
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });
  const relayFor = (f: OutboxFixture, rest: Omit<OutboxRelayOptions, 'db' | 'schema'>) =>
    createOutboxRelay({ db: f.db, schema: f.schema, notifyChannel: f.channel, ...rest });

  it('counts a publish that has not settled within publishTimeoutMs as broker unavailability: retried after the outage backoff, attempts kept', async () => {
    const f = await open();
    const [a1, , b1] = await writeOrders(f, ['a', 'a', 'b']);
    const clock = manualClock();
    const time = manualTimers(clock);
    const publisher = new ControlledPublisher((m) => m.envelope.messageId === a1);
    const failures: PublishFailure[] = [];
    const relay = relayFor(f, {
      publisher,
      clock: clock.clock,
      timers: time.timers,
      leaseMs: 10_000,
      publishTimeoutMs: 2_000,
      random: () => 0,
      unavailableBackoff: { baseMs: 1_000, capMs: 60_000, jitter: 0 },
      hooks: { onFailed: (_m, failure) => failures.push(failure) },
    });
    const run = relay.runOnce();
    await publisher.waitForCalls(2);
    // One ms early: still waiting.
    time.advance(1_999);
    await settleIo(f);
    expect((await outboxRows(f))[0]).toMatchObject({ status: 'PROCESSING' });
    time.advance(1);
    expect(await run).toEqual({ claimed: 3, published: 1, failed: 1, dead: 0, released: 1 });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ dead: false, retryInMs: 1_000, unavailable: true });
    expect(failures[0]!.error).toBeInstanceOf(OutboxPublishTimeoutError);
    expect(classifyError(failures[0]!.error)).toBe('retryable');
    const afterTimeout = await outboxRows(f);
    expect(
      afterTimeout.map((r) => [r.status, r.attempts, r.last_error, r.locked_until_ms]),
    ).toEqual([
      [
        'READY',
        0,
        'broker unavailable: OutboxPublishTimeoutError: publish timed out after 2000 ms',
        null,
      ],
      ['READY', 0, null, null],
      ['SENT', 1, null, null],
    ]);
    // Due at once: the relay's outage backoff holds it back (and lets it go as soon as the
    // outage ends, however that happens), not a due time of the row's own.
    expect(afterTimeout[0]!.available_ms).toBe(clock.now());
    expect(publisher.published.map((m) => m.envelope.messageId)).toEqual([b1]);

    // The broker confirms a1 after all: nothing about the row changes (the relay no longer holds it).
    publisher.settleLate(a1!);
    await settleIo(f);
    expect(await outboxRows(f)).toEqual(afterTimeout);
    expect(relay.metrics()).toMatchObject({ published: 1, failed: 1 });
    expect(time.pending()).toBe(0);
    // Within the outage's 1 s step nothing is tried: the rows are given back untried.
    expect(await relay.runOnce()).toMatchObject({ published: 0, failed: 0 });
    expect(publisher.calls).toHaveLength(2);
  });

  it('a late settlement cannot touch a row another relay claimed since (lease token)', async () => {
    const f = await open();
    const [a1] = await writeOrders(f, ['a']);
    const clock = manualClock();
    const time = manualTimers(clock);
    const first = new ControlledPublisher(() => true);
    const relayA = relayFor(f, {
      publisher: first,
      clock: clock.clock,
      timers: time.timers,
      leaseMs: 10_000,
      publishTimeoutMs: 1_000,
      unavailableBackoff: { baseMs: 100, capMs: 100, jitter: 0 },
    });
    const runA = relayA.runOnce();
    await first.waitForCalls(1);
    time.advance(1_000);
    expect(await runA).toMatchObject({ failed: 1 });
    time.advance(100);
    // Relay B retries it and is itself still waiting for its broker.
    const second = new ControlledPublisher(() => true);
    const relayB = relayFor(f, {
      publisher: second,
      clock: clock.clock,
      timers: time.timers,
      leaseMs: 10_000,
      publishTimeoutMs: 5_000,
    });
    const runB = relayB.runOnce();
    await second.waitForCalls(1);
    const held = await outboxRows(f);
    // The timeout gave A's attempt back (unavailability): this is attempt 1 again.
    expect(held.map((r) => [r.status, r.attempts])).toEqual([['PROCESSING', 1]]);
    // A's first publish fails late, then succeeds late: neither is recorded.
    first.settleLate(a1!, new Error('late nack'));
    await settleIo(f);
    expect(await outboxRows(f)).toEqual(held);
    second.settleLate(a1!);
    expect(await runB).toMatchObject({ published: 1 });
    expect((await outboxRows(f)).map((r) => [r.status, r.attempts])).toEqual([['SENT', 1]]);
  });

  it('does not start a publish that could outlive the lease; the rest of the run is given back untried', async () => {
    const f = await open();
    const [a1] = await writeOrders(f, ['a', 'a']);
    const clock = manualClock();
    const publisher = new ControlledPublisher((m) => m.envelope.messageId === a1);
    const relay = relayFor(f, {
      publisher,
      clock: clock.clock,
      timers: manualTimers().timers,
      leaseMs: 3_000,
      publishTimeoutMs: 2_000,
    });
    const run = relay.runOnce();
    await publisher.waitForCalls(1);
    // a1 took 1.5 s: a2 could run until 3.5 s, past the 3 s lease.
    clock.advance(1_500);
    publisher.settleLate(a1!);
    expect(await run).toEqual({ claimed: 2, published: 1, failed: 0, dead: 0, released: 1 });
    expect((await outboxRows(f)).map((r) => [r.status, r.attempts])).toEqual([
      ['SENT', 1],
      ['READY', 0],
    ]);
  });

  it('stop() without a timeout still ends: a publish that never settles times out', async () => {
    const f = await open();
    await writeOrders(f, ['a']);
    const time = manualTimers();
    const publisher = new ControlledPublisher(() => true);
    const relay = relayFor(f, {
      publisher,
      timers: time.timers,
      leaseMs: 20_000,
      pollIntervalMs: 600_000,
      minPollIntervalMs: 600_000, // no adaptive polls either (MySQL/MariaDB default to a short floor)
      random: () => 0,
    });
    await relay.start();
    await publisher.waitForCalls(1);
    const stopped = relay.stop();
    // The default publish timeout is half the lease.
    time.advance(10_000);
    await stopped;
    const [row] = await outboxRows(f);
    expect(row).toMatchObject({
      status: 'READY',
      attempts: 0,
      locked_until_ms: null,
      last_error: 'broker unavailable: OutboxPublishTimeoutError: publish timed out after 10000 ms',
    });
  });

  it('stop({ timeoutMs }) gives up on a publish that never settles and releases every row it holds', async () => {
    const f = await open();
    const ids = await writeOrders(f, ['a', 'a', 'b']);
    const time = manualTimers();
    const publisher = new ControlledPublisher(() => true);
    // Both lanes must have claimed before stop(): a claim still on its way would run after
    // stop() released the rows, take them and release them again. They claim at the same time,
    // so one may take every row (the other then finds nothing) or each may take an aggregate.
    let otherLaneIdle = false;
    // One publish at a time: the row published first holds the window, the rest wait untried.
    const relay = relayFor(f, {
      publisher,
      timers: time.timers,
      leaseMs: 60_000,
      concurrency: 1,
      pollIntervalMs: 600_000,
      minPollIntervalMs: 600_000, // no adaptive polls either (MySQL/MariaDB default to a short floor)
      hooks: {
        onBatch: (batch) => {
          if (batch.claimed === 0) otherLaneIdle = true;
        },
      },
    });
    await relay.start();
    await publisher.waitForCalls(1);
    const leases = async () =>
      (
        await f.db.query<{ status: string; lease_token: string | null }>(
          `SELECT status, lease_token FROM ${f.table('outbox_event')} ORDER BY id`,
        )
      ).rows;
    await waitFor(
      'both lanes claimed',
      async () => {
        const rows = await leases();
        const tokens = new Set(rows.map((row) => row.lease_token));
        return rows.every((row) => row.status === 'PROCESSING') &&
          (otherLaneIdle || tokens.size === 2)
          ? true
          : undefined;
      },
      10_000,
      5,
    );
    let resolved = false;
    const stopped = relay.stop({ timeoutMs: 5_000 }).then(() => (resolved = true));
    await settleIo(f);
    expect(resolved).toBe(false);
    time.advance(5_000);
    await stopped;
    expect(publisher.calls).toHaveLength(1);
    const tried = publisher.calls[0]!.envelope.messageId;
    const rows = await outboxRows(f);
    expect(rows.map((r) => [r.event_id, r.status, r.attempts, r.locked_until_ms])).toEqual(
      ids.map((id) =>
        // Its publish started and may yet reach the broker: the attempt counts, but not as a
        // failure. The others were never tried: as if never claimed.
        id === tried ? [id, 'READY', 1, null] : [id, 'READY', 0, null],
      ),
    );
    expect(rows.map((r) => r.last_error)).toEqual(
      ids.map((id) => (id === tried ? 'relay stopped before the publish settled' : null)),
    );
    // Due again at once (no backoff): another relay may take them now.
    expect(rows.every((r) => r.available_ms <= Date.now() + 1_000)).toBe(true);
    expect(relay.metrics()).toMatchObject({ published: 0, failed: 0, released: 3 });
    expect(time.pending()).toBe(0);

    // The abandoned publish settles after all: the row (no longer held) stays as it is.
    publisher.settleLate(tried);
    await settleIo(f);
    expect(await outboxRows(f)).toEqual(rows);
  });

  it('stop({ timeoutMs }) resolves as soon as in-flight publishes finish, recording them', async () => {
    const f = await open();
    const [a1] = await writeOrders(f, ['a']);
    const time = manualTimers();
    const publisher = new ControlledPublisher(() => true);
    const relay = relayFor(f, {
      publisher,
      timers: time.timers,
      pollIntervalMs: 600_000,
      minPollIntervalMs: 600_000,
    });
    await relay.start();
    await publisher.waitForCalls(1);
    const stopped = relay.stop({ timeoutMs: 5_000 });
    publisher.settleLate(a1!);
    await stopped;
    expect((await outboxRows(f)).map((r) => [r.status, r.attempts])).toEqual([['SENT', 1]]);
    expect(time.pending()).toBe(0);
  });
});
