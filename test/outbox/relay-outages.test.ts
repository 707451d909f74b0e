/**
 * The relay under outages, on the real PostgreSQL:
 * - the broker unavailable for longer than the whole attempt budget: nothing goes DEAD, order kept;
 * - PostgreSQL cut under a running relay (TCP fault proxy): no crash, LISTEN comes back, rows flow;
 * - a long publishing run keeps its lease by heartbeat (no other relay takes its rows), while a
 *   crashed relay's rows are taken over after one short lease (measured by the outage suite).
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ChannelClosedError,
  PublishTimeoutError,
  RecordingPublisher,
  createOutboxRelay,
  isUnavailableError,
  mysqlDatabase,
  outboxStats,
  postgresDatabase,
  writeOutboxEvent,
  type Database,
} from 'evgen/runtime';
import { type PublishFailure } from '../../src/runtime/outbox/relay-options.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { mariadbPool } from '../support/mariadb.js';
import {
  manualClock,
  openOutbox,
  outboxRows,
  pgliteOnce,
  type OutboxFixture,
} from './support/dialects.js';
import { orderPlacedV1 } from './support/test-event.js';

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
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('outbox relay outages (real PostgreSQL)', () => {
  let fixture: OutboxFixture | undefined;
  let proxy: FaultProxy | undefined;
  const pools: pg.Pool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.end().catch(() => undefined)));
    await proxy?.close();
    proxy = undefined;
    await fixture?.close();
    fixture = undefined;
  });

  it('a broker outage longer than the attempt budget sends nothing DEAD; order resumes when it is back', async () => {
    const f = (fixture = await openOutbox('postgres', pgliteOnce()));
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

  it('survives PostgreSQL connections cut for a while: no crash, LISTEN re-subscribes, rows written meanwhile are published', async () => {
    const f = (fixture = await openOutbox('postgres', pgliteOnce()));
    proxy = await startFaultProxy({ targetPort: 5432 });
    const pool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/test`,
      max: 4,
      connectionTimeoutMillis: 2_000,
    });
    pool.on('error', () => undefined);
    pools.push(pool);
    const throughProxy = postgresDatabase(pool, { listenReconnect: { baseMs: 50, capMs: 500 } });
    const publisher = new RecordingPublisher();
    const errors: unknown[] = [];
    const relay = createOutboxRelay({
      db: throughProxy,
      schema: f.schema,
      publisher,
      notifyChannel: f.channel,
      // Long enough that only a NOTIFY (i.e. a working LISTEN) makes the relay look in time.
      pollIntervalMs: 60_000,
      hooks: { onError: (error) => errors.push(error) },
    });
    await relay.start();
    try {
      await write(f.db, f.schema, ['a'], f.channel);
      await until(
        'first row SENT',
        async () => (await outboxStats(f.db, { schema: f.schema })).sent === 1,
      );
      // Cut: every connection reset (the LISTEN one included), new ones refused, for 2 s.
      await proxy.refuse();
      proxy.dropAll();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      await proxy.restore();
      // The lost LISTEN was reported, re-subscribed, and the relay looked once it was back.
      await until('LISTEN re-subscribed', async () => proxy!.stats().open > 0);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await write(f.db, f.schema, ['a', 'b'], f.channel);
      await until(
        'rows written after the cut published',
        async () => (await outboxStats(f.db, { schema: f.schema })).sent === 3,
      );
      expect(publisher.published).toHaveLength(3);
      // The lost LISTEN connection and the refused re-subscriptions were reported, not thrown.
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await relay.stop({ timeoutMs: 5_000 });
    }
  });

  it('renews its lease (heartbeat) while it publishes longer than one lease, so no other relay takes its rows', async () => {
    const f = (fixture = await openOutbox('postgres', pgliteOnce()));
    await write(
      f.db,
      f.schema,
      Array.from({ length: 20 }, () => 'a'),
    );
    // Each publish takes 150 ms: 20 of them (3 s) outlast the 2 s lease. A renewal starts once a
    // quarter of the lease has passed and has ~400 ms to land before the lease no longer allows a
    // publish of timeout 1 s, so a loaded machine (parallel test files) does not lose it.
    const slow = new RecordingPublisher();
    const publishSlowly = slow.publish.bind(slow);
    slow.publish = async (message) => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      return publishSlowly(message);
    };
    const leaseMs = 2000;
    const busy = createOutboxRelay({
      db: f.db,
      schema: f.schema,
      publisher: slow,
      notifyChannel: false,
      leaseMs,
      publishTimeoutMs: 1000,
    });
    const other = new RecordingPublisher();
    const rival = createOutboxRelay({
      db: f.openAnother(2),
      schema: f.schema,
      publisher: other,
      notifyChannel: false,
      leaseMs,
      publishTimeoutMs: 1000,
    });
    const run = busy.runOnce();
    let rivalClaims = 0;
    while ((await outboxStats(f.db, { schema: f.schema })).sent < 20) {
      rivalClaims += (await rival.runOnce()).claimed;
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (slow.published.length === 0 && rivalClaims > 0) break;
    }
    expect(await run).toMatchObject({ claimed: 20, published: 20, released: 0 });
    expect(rivalClaims).toBe(0);
    expect(other.calls).toHaveLength(0);
    expect(busy.metrics().leaseRenewals).toBeGreaterThan(0);
    expect((await outboxRows(f)).every((r) => r.status === 'SENT' && r.attempts === 1)).toBe(true);
  });
});

describe('outbox relay outages (real MariaDB)', () => {
  it('survives its database connections cut for 5 s: no crash, errors reported, every row published once and in order', async () => {
    const f = await openOutbox('mariadb', pgliteOnce());
    const proxy = await startFaultProxy({ targetPort: 3306 });
    const pool = mariadbPool(f.url!.replace('127.0.0.1:3306', `127.0.0.1:${proxy.port}`), 4);
    const publisher = new RecordingPublisher();
    const errors: unknown[] = [];
    const relay = createOutboxRelay({
      db: mysqlDatabase(pool),
      schema: f.schema,
      publisher,
      notifyChannel: false,
      pollIntervalMs: 100,
      hooks: { onError: (error) => errors.push(error) },
    });
    await relay.start();
    try {
      const before = await write(f.db, f.schema, ['a', 'b']);
      await until(
        'rows before the cut SENT',
        async () => (await outboxStats(f.db, { schema: f.schema })).sent === 2,
      );
      // Cut: every connection reset, new ones refused, for 5 s, while rows keep being written.
      await proxy.refuse();
      proxy.dropAll();
      const during = await write(f.db, f.schema, ['a', 'a', 'b']);
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect(publisher.published).toHaveLength(2);
      await proxy.restore();
      const after = await write(f.db, f.schema, ['a']);
      await until(
        'every row SENT after the cut',
        async () => (await outboxStats(f.db, { schema: f.schema })).sent === 6,
      );
      const ids = publisher.published.map((m) => m.envelope.messageId);
      expect(new Set(ids).size).toBe(6);
      expect(ids.sort()).toEqual([...before, ...during, ...after].sort());
      const aOrder = publisher.published
        .filter((m) => m.envelope.aggregateId === 'a')
        .map((m) => m.envelope.messageId);
      expect(aOrder).toEqual([before[0], during[0], during[1], after[0]]);
      // The failed rounds were reported as database unavailability, not thrown.
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.every((error) => isUnavailableError(error))).toBe(true);
    } finally {
      await relay.stop({ timeoutMs: 5_000 });
      await pool.end().catch(() => undefined);
      await proxy.close();
      await f.close();
    }
  });
});
