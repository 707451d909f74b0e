/**
 * The relay under outages, one test body per dialect (PostgreSQL server, PGlite, MariaDB):
 * - the broker unavailable for longer than the whole attempt budget: nothing goes DEAD, order kept;
 * - the relay's database connections cut through the TCP fault proxy (server dialects; PGlite
 *   lives in this process) for 5 s, and for 90 s with EVGEN_FAULTS=full, while rows are written
 *   and confirms are in flight: no crash, errors reported as unavailability, every row published
 *   exactly once, in order per aggregate, soon after the database returns (on PostgreSQL the
 *   relay polls only every 60 s, so the lost LISTEN must come back for it to look);
 * - a long publishing run keeps its lease by heartbeat: no other relay takes its rows while it
 *   publishes past the lease it claimed them with.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  ChannelClosedError,
  PublishTimeoutError,
  RecordingPublisher,
  createOutboxRelay,
  outboxStats,
  writeOutboxEvent,
  type Database,
} from 'evgen/runtime';
import { type PublishFailure } from '../../src/runtime/outbox/relay-options.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import {
  DIALECTS,
  manualClock,
  openOutbox,
  outboxRows,
  pgliteOnce,
  throughProxy,
  type OutboxFixture,
} from './support/dialects.js';
import {
  nonTransientErrors,
  publishedFor,
  recovery,
  slowRecordingPublisher,
} from './support/fault-recovery.js';
import { orderPlacedV1 } from './support/test-event.js';

const full = process.env.EVGEN_FAULTS === 'full';
const pglite = pgliteOnce();
afterAll(() => pglite.close());
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function write(
  db: Database,
  schema: string,
  orderIds: readonly string[],
  notifyChannel: string | false = false,
): Promise<string[]> {
  const ids: string[] = [];
  for (const [index, orderId] of orderIds.entries()) {
    const envelope = await db.transaction((tx) =>
      writeOutboxEvent(
        tx,
        orderPlacedV1,
        { orderId, amount: index },
        {},
        { schema, notifyChannel, assignAggregateVersion: true },
      ),
    );
    ids.push(envelope.messageId);
  }
  return ids;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const AGGREGATES = Array.from({ length: 16 }, (_, index) => `o${index}`);

/** Database cuts: 5 s always; 90 s (longer than every lease and backoff) in the full fault run. */
const CUTS = [
  { seconds: 5, limitMs: 10_000, run: true },
  { seconds: 90, limitMs: 15_000, run: full },
] as const;

describe.each(DIALECTS)('outbox relay outages on %s', (dialect) => {
  let fixture: OutboxFixture | undefined;
  let proxy: FaultProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
    await fixture?.close();
    fixture = undefined;
  });
  const open = async () => (fixture = await openOutbox(dialect, pglite));

  it('a broker outage longer than the attempt budget sends nothing DEAD; order resumes when it is back', async () => {
    const f = await open();
    const ids = await write(f.db, f.schema, ['a', 'a', 'a', 'b']);
    const clock = manualClock();
    let brokerUp = false;
    let call = 0;
    const publisher = new RecordingPublisher(() => {
      if (brokerUp) return undefined;
      // The ways an unreachable broker shows up: closed channel, confirm timeout, refused socket.
      call++;
      if (call % 3 === 0) return new PublishTimeoutError('m', 'x', 'k', 10_000);
      if (call % 3 === 1) return new ChannelClosedError('channel closed before confirm');
      return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5672'), {
        code: 'ECONNREFUSED',
      });
    });
    const failures: PublishFailure[] = [];
    const relay = createOutboxRelay({
      db: f.db,
      schema: f.schema,
      publisher,
      clock: clock.clock,
      notifyChannel: false,
      maxAttempts: 3,
      unavailableBackoff: { baseMs: 100, capMs: 1_600, jitter: 0 },
      hooks: { onFailed: (_m, failure) => failures.push(failure) },
    });
    // 30 rounds: ten times the attempt budget.
    for (let round = 0; round < 30; round++) {
      await relay.runOnce();
      clock.advance(1_600);
    }
    expect(failures.length).toBeGreaterThanOrEqual(30);
    expect(failures.every((failure) => failure.unavailable === true && !failure.dead)).toBe(true);
    // The outage backoff grows per round and is capped. Aggregates 'a' and 'b' fail together in
    // each round: one step, the same delay for both.
    const firstDelays = failures.slice(0, 12).map((failure) => failure.retryInMs ?? -1);
    expect(firstDelays).toEqual([
      100, 100, 200, 200, 400, 400, 800, 800, 1_600, 1_600, 1_600, 1_600,
    ]);
    let rows = await outboxRows(f);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ['READY', 0],
      ['READY', 0],
      ['READY', 0],
      ['READY', 0],
    ]);
    expect(rows[0]!.last_error).toMatch(/^broker unavailable: /);
    brokerUp = true;
    await relay.runOnce();
    rows = await outboxRows(f);
    expect(rows.map((r) => r.status)).toEqual(['SENT', 'SENT', 'SENT', 'SENT']);
    expect(
      publisher.published
        .filter((m) => m.envelope.aggregateId === 'a')
        .map((m) => m.envelope.messageId),
    ).toEqual(ids.slice(0, 3));
    expect(relay.metrics().dead).toBe(0);
  });

  // Found by the Pulsar broker-kill test: the rows in flight when the broker went away carried
  // the outage's step as their own due time, so after a long outage the probe's reconnect woke
  // the relay but every aggregate that had been publishing still waited out up to a 30 s step.
  it('the broker coming back ends the outage for the rows that failed in it too, not only for new rows', async () => {
    const f = await open();
    await write(f.db, f.schema, ['a', 'a', 'b']);
    // The clock never moves: whatever is due after the outage is due because it ended.
    const clock = manualClock();
    let brokerUp = false;
    const recording = new RecordingPublisher(() =>
      brokerUp
        ? undefined
        : Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5672'), {
            code: 'ECONNREFUSED',
          }),
    );
    const relay = createOutboxRelay({
      db: f.db,
      schema: f.schema,
      publisher: {
        publish: (message) => recording.publish(message),
        probe: async () => {
          if (!brokerUp) throw new Error('connect ECONNREFUSED 127.0.0.1:5672');
        },
      },
      clock: clock.clock,
      notifyChannel: false,
      // A 10-minute step: the rows must not wait for it once the broker is back.
      unavailableBackoff: { baseMs: 600_000, capMs: 600_000, jitter: 0 },
    });
    await relay.runOnce();
    expect(recording.calls.length).toBeGreaterThan(0);
    expect(recording.published).toEqual([]);
    brokerUp = true;
    // The probe (every 500 ms while the broker is unreachable) sees it back and ends the outage.
    await until(
      'every row published after the outage ended',
      async () => {
        await relay.runOnce();
        return recording.published.length === 3;
      },
      20_000,
    );
    expect((await outboxRows(f)).map((r) => r.status)).toEqual(['SENT', 'SENT', 'SENT']);
    expect(relay.metrics().dead).toBe(0);
    await relay.stop();
  });

  for (const cut of CUTS) {
    it.runIf(dialect !== 'pglite' && cut.run)(
      `survives its database connections cut for ${cut.seconds} s under traffic: errors reported, every row published once, in order, soon after the return`,
      async () => {
        const f = await open();
        const cutProxy = (proxy = await startFaultProxy({
          targetPort: dialect === 'mariadb' ? 3306 : 5432,
        }));
        const relayDb = throughProxy(f, cutProxy, { listenReconnect: { baseMs: 50, capMs: 500 } });
        const notify = dialect === 'postgres' ? f.channel : false;
        // Confirms take 50 ms, so publishes are in flight (their SENT marks not written yet)
        // when the cut comes.
        const publisher = slowRecordingPublisher(50);
        const publishedAt = new Map<string, number>();
        const errors: unknown[] = [];
        const relay = createOutboxRelay({
          db: relayDb.db,
          schema: f.schema,
          publisher,
          notifyChannel: notify,
          // PostgreSQL: only a NOTIFY (a LISTEN that came back) makes the relay look in time.
          pollIntervalMs: dialect === 'postgres' ? 60_000 : 1_000,
          hooks: {
            onError: (error) => errors.push(error),
            onPublished: (message) => {
              if (!publishedAt.has(message.envelope.messageId))
                publishedAt.set(message.envelope.messageId, Date.now());
            },
          },
        });
        // Traffic: a row every 20 ms over 16 aggregates, before, during and after the cut (a 90 s
        // cut leaves a backlog of thousands; each aggregate publishes one confirm at a time).
        const written: { id: string; aggregate: string; at: number }[] = [];
        let writing = true;
        const writer = (async () => {
          for (let n = 0; writing; n++) {
            const aggregate = AGGREGATES[n % AGGREGATES.length]!;
            const [id] = await write(f.db, f.schema, [aggregate], notify);
            written.push({ id: id!, aggregate, at: Date.now() });
            await sleep(20);
          }
        })();
        await relay.start();
        try {
          await sleep(1_000);
          await cutProxy.refuse();
          cutProxy.dropAll();
          await sleep(cut.seconds * 1_000);
          await cutProxy.restore();
          const restoredAt = Date.now();
          // Writing goes on until every row written before the return and one written after it
          // are published: on PostgreSQL only NOTIFYs (the LISTEN back) wake the relay for them.
          await until(
            'the backlog and a row written after the return published',
            async () =>
              written.every((row) => row.at > restoredAt || publishedAt.has(row.id)) &&
              written.some((row) => row.at > restoredAt && publishedAt.has(row.id)),
            cut.limitMs + 60_000,
          );
          writing = false;
          await writer;
          await until(
            'every row SENT after the cut',
            async () => (await outboxStats(f.db, { schema: f.schema })).sent === written.length,
            cut.limitMs + 60_000,
          );
          const waited = written.filter((row) => row.at < restoredAt);
          // Recovery: the return until every row committed before it was published.
          const { recoveryMs, caughtUpMs } = recovery(waited, publishedAt, restoredAt, AGGREGATES);
          const ids = publisher.published.map((m) => m.envelope.messageId);
          console.log(
            `[${dialect}] cut ${cut.seconds} s: ${written.length} rows (${waited.length} before the return), ${ids.length} publishes, ${ids.length - new Set(ids).size} doubled, every aggregate moving again ${recoveryMs} ms and caught up ${caughtUpMs} ms after the return, ${errors.length} errors reported`,
          );
          expect(ids.length).toBe(new Set(ids).size);
          expect([...ids].sort()).toEqual(written.map((row) => row.id).sort());
          for (const aggregate of AGGREGATES) {
            expect(publishedFor(publisher.published, aggregate)).toEqual(
              written.filter((row) => row.aggregate === aggregate).map((row) => row.id),
            );
          }
          expect(recoveryMs).toBeLessThanOrEqual(cut.limitMs);
          // The failed rounds (and the lost LISTEN) were reported, not thrown.
          expect(errors.length).toBeGreaterThan(0);
          // No error is a deterministic one (a deadlock 1213 is transient too).
          expect(nonTransientErrors(errors)).toEqual([]);
        } finally {
          writing = false;
          await writer;
          await relay.stop({ timeoutMs: 5_000 });
          await relayDb.end();
        }
      },
      cut.seconds * 1_000 + 120_000,
    );
  }

  it('renews its lease (heartbeat) while it publishes past the lease it claimed with, so no other relay takes its rows', async () => {
    const f = await open();
    const rows = 28;
    const ids = await write(
      f.db,
      f.schema,
      Array.from({ length: rows }, () => 'a'),
    );
    // 28 publishes of 250 ms (7 s) outlast the 6 s lease. A renewal starts once a quarter of the
    // lease has passed (1.5 s) and must land before the lease no longer allows a publish of
    // timeout 1 s (5 s): 3.5 s of room, so a loaded machine does not make it late. What is
    // checked is behaviour, not timing: rows published past the first lease, none by both.
    const slow = slowRecordingPublisher(250);
    const leaseMs = 6_000;
    const publishedAt: number[] = [];
    const busy = createOutboxRelay({
      db: f.db,
      schema: f.schema,
      publisher: slow,
      notifyChannel: false,
      leaseMs,
      publishTimeoutMs: 1_000,
      hooks: { onPublished: () => publishedAt.push(Date.now()) },
    });
    const other = new RecordingPublisher();
    const rival = createOutboxRelay({
      db: f.openAnother(2),
      schema: f.schema,
      publisher: other,
      notifyChannel: false,
      leaseMs,
      publishTimeoutMs: 1_000,
    });
    const claimedBy = Date.now();
    const run = busy.runOnce();
    // The rival starts once the busy relay holds every row (its first publish has begun).
    await slow.waitForCalls(1);
    const deadline = Date.now() + 60_000;
    while ((await outboxStats(f.db, { schema: f.schema })).sent < rows) {
      if (Date.now() > deadline) throw new Error('rows not all SENT within 60 s');
      await rival.runOnce();
      await sleep(100);
    }
    expect(await run).toMatchObject({ claimed: rows });
    // The busy relay still published after the lease it claimed with had ended: it was renewed.
    expect(busy.metrics().leaseRenewals).toBeGreaterThan(0);
    expect(publishedAt.filter((at) => at > claimedBy + leaseMs).length).toBeGreaterThan(0);
    // No row went to both relays; every row was published exactly once.
    const byBusy = slow.published.map((m) => m.envelope.messageId);
    const byRival = other.calls.map((m) => m.envelope.messageId);
    expect(byRival.filter((id) => byBusy.includes(id))).toEqual([]);
    expect([...byBusy, ...byRival].sort()).toEqual([...ids].sort());
    expect((await outboxRows(f)).every((r) => r.status === 'SENT' && r.attempts === 1)).toBe(true);
  }, 90_000);
});
