/**
 * The consumer runner keeps per-aggregate order and spends attempts only on message-specific
 * failures (real RabbitMQ, real PostgreSQL, the real inbox with `ctx.inOrder`):
 * - versions of one aggregate published in order are all applied at the default prefetch
 *   (deliveries of one aggregate run one after the other, others concurrently);
 * - a real gap waits on the first tier without using attempts, and only for `gapWaitMs` without
 *   progress of its aggregate: a chain that unwinds one version per pass for longer than
 *   `gapWaitMs` is applied whole, a gap whose predecessor never comes is dead-lettered;
 * - a database outage pauses consumption (circuit breaker): messages stay in the queue, nothing
 *   is retried or dead-lettered, everything is applied once, in order, when it is back.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfirmedPublisher,
  createRabbitMqConsumerRunner,
  createEnvelope,
  migrateInbox,
  postgresDatabase,
  publishEnvelope,
  type ConsumerRunner,
  type ConsumerRunnerEvent,
  type ConsumerRunnerOptions,
  type Database,
  type ResolvedTopology,
} from 'evgen/runtime';
import {
  ORDER_EVENT,
  checkEffects,
  createEffectsTable,
  effectConsumer,
} from '../support/effect-oracle.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  SAMPLE_TOPOLOGY,
  createTestBroker,
  drainQueue,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';

describe('consumer runner ordering and circuit breaker (real RabbitMQ and PostgreSQL)', () => {
  let broker: TestBroker;
  let test: TestSchema;
  let db: Database;
  let topology: ResolvedTopology;
  let publisher: ConfirmedPublisher;
  let runner: ConsumerRunner | undefined;
  let proxy: FaultProxy | undefined;
  const events: ConsumerRunnerEvent[] = [];
  const published = new Map<string, string>();
  const versions = new Map<string, number>();

  beforeEach(async () => {
    broker = await createTestBroker();
    topology = await broker.declare(SAMPLE_TOPOLOGY, { tiers: [200, 1_000] });
    test = await createTestSchema('evgen_order');
    db = postgresDatabase(test.pool);
    await migrateInbox(db, { schema: test.schema });
    await createEffectsTable(db, test.schema);
    publisher = new ConfirmedPublisher(broker.connection);
    events.length = 0;
    published.clear();
    versions.clear();
  });

  afterEach(async () => {
    await runner?.stop();
    runner = undefined;
    await publisher.close();
    await proxy?.close();
    proxy = undefined;
    await broker.cleanup();
    await test.drop();
  });

  /** Publishes the next version of `orderId` (or the given one) and waits for the confirm. */
  async function publishNext(orderId: string, version?: number): Promise<string> {
    const next = version ?? (versions.get(orderId) ?? 0) + 1;
    versions.set(orderId, Math.max(next, versions.get(orderId) ?? 0));
    const envelope = createEnvelope(
      ORDER_EVENT,
      { orderId, seq: next },
      { aggregateVersion: next },
    );
    await publishEnvelope(
      publisher,
      envelope,
      { exchange: 'order', routingKey: 'order.created' },
      { prefix: broker.prefix },
    );
    published.set(envelope.messageId, orderId);
    return envelope.messageId;
  }

  async function startRunner(
    consumerDb: Database,
    options: Partial<ConsumerRunnerOptions> = {},
    gapWaitMs?: number,
  ): Promise<ConsumerRunner> {
    runner = createRabbitMqConsumerRunner({
      handler: effectConsumer(consumerDb, test.schema),
      onEvent: (event) => events.push(event),
      ...options,
      rabbitmq: {
        connection: broker.connection,
        routes: topology.consumers['inventory-service']!,
        gapWaitMs,
      },
    });
    await runner.start();
    return runner;
  }

  const effectCount = async () =>
    Number(
      (await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${test.schema}".effects`))
        .rows[0]!.n,
    );

  it('applies 40 in-order versions of one aggregate at the default prefetch, none dead-lettered', async () => {
    const r = await startRunner(db);
    // Confirmed one by one, while the runner consumes (the reported failure: 24 of 40 dead).
    for (let k = 0; k < 40; k++) await publishNext('hot');
    for (let k = 0; k < 40; k++) await publishNext(`other-${k % 4}`);
    await waitFor(
      '80 effects',
      async () => ((await effectCount()) === 80 ? true : undefined),
      60_000,
    );
    const report = await checkEffects(db, test.schema, published);
    expect(report).toEqual({ effects: 80, lost: [], doubled: [], outOfOrder: [] });
    expect(r.metrics()).toMatchObject({ deadLettered: 0, retried: 0, gapWaits: 0 });
    const dead = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.deadQueue,
    );
    expect(dead).toHaveLength(0);
  });

  it('parks a message ahead of a missing version without using attempts, then applies both in order', async () => {
    const r = await startRunner(db, {}, 30_000);
    const v2 = await publishNext('gap', 2);
    await waitFor('a gap wait', () => events.find((e) => e.type === 'gap-wait'));
    await new Promise((resolve) => setTimeout(resolve, 600));
    const v1 = await publishNext('gap', 1);
    await waitFor('both applied', async () => ((await effectCount()) === 2 ? true : undefined));
    expect(await checkEffects(db, test.schema, published)).toEqual({
      effects: 2,
      lost: [],
      doubled: [],
      outOfOrder: [],
    });
    expect(published.has(v1) && published.has(v2)).toBe(true);
    expect(r.metrics().gapWaits).toBeGreaterThanOrEqual(1);
    // Waiting for the gap used no attempt and sent nothing to the dead queue.
    expect(r.metrics()).toMatchObject({ retried: 0, deadLettered: 0 });
    const handled = events.find((e) => e.type === 'handled' && e.messageId === v2);
    expect(handled).toMatchObject({ attempt: 1 });
  });

  it('a chain that unwinds one version per pass for longer than gapWaitMs waits while it progresses: all applied once, in order, none dead-lettered', async () => {
    // v20 … v2 published first, then v1: every pass through the first tier applies one more
    // version (the parked copies come back in the order they were parked, the lowest last), so
    // the chain takes ~19 passes, far longer than gapWaitMs, while it progresses on every pass.
    // Measured from the first gap (the old rule), v20 … v10 outlived the wait and were dead.
    const gapWaitMs = 2_000;
    const r = await startRunner(db, {}, gapWaitMs);
    const started = Date.now();
    for (let version = 20; version >= 2; version--) await publishNext('chain', version);
    await publishNext('chain', 1);
    // Every version either applied or dead-lettered (the old rule dead-lettered the upper ones).
    await waitFor(
      '20 versions settled',
      async () => ((await effectCount()) + r.metrics().deadLettered >= 20 ? true : undefined),
      45_000,
    );
    const unwoundMs = Date.now() - started;
    expect(await checkEffects(db, test.schema, published)).toEqual({
      effects: 20,
      lost: [],
      doubled: [],
      outOfOrder: [],
    });
    // The premise: unwinding outlasted gapWaitMs (else this test would not tell the rules apart).
    expect(unwoundMs).toBeGreaterThan(gapWaitMs);
    expect(r.metrics()).toMatchObject({ retried: 0, deadLettered: 0 });
    expect(r.metrics().gapWaits).toBeGreaterThan(19);
    const dead = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.deadQueue,
    );
    expect(dead).toHaveLength(0);
  });

  it('a gap whose predecessor never comes waits gapWaitMs, then uses attempts and ends in the dead queue', async () => {
    const gapWaitMs = 500;
    const r = await startRunner(db, {}, gapWaitMs);
    const started = Date.now();
    await publishNext('never', 5);
    const dead = await waitFor(
      'dead-lettered',
      () => events.find((e) => e.type === 'dead-lettered'),
      30_000,
    );
    expect(dead).toMatchObject({ attempts: 3 });
    expect(r.metrics().gapWaits).toBeGreaterThanOrEqual(1);
    expect(r.metrics().retried).toBe(2);
    // Parked only while it waited less than gapWaitMs: no gap-wait event reports more.
    const waits = events.filter(
      (e): e is Extract<ConsumerRunnerEvent, { type: 'gap-wait' }> => e.type === 'gap-wait',
    );
    for (const wait of waits) expect(wait.waitedMs).toBeLessThan(gapWaitMs);
    // Bounded: gapWaitMs, then the two retry tiers (200 ms, 1 s), with slack for the broker.
    expect(Date.now() - started).toBeLessThan(gapWaitMs + 1_200 + 5_000);
    const letters = await drainQueue(
      broker.channel,
      topology.consumers['inventory-service']!.deadQueue,
    );
    expect(letters).toHaveLength(1);
  });

  it('pauses consumption while the database is unreachable, keeps messages queued, applies everything once and in order after', async () => {
    proxy = await startFaultProxy({ targetPort: 5432 });
    const pool = new pg.Pool({
      connectionString: `postgres://postgres@127.0.0.1:${proxy.port}/test`,
      max: 6,
      connectionTimeoutMillis: 1_000,
    });
    pool.on('error', () => undefined);
    try {
      const r = await startRunner(postgresDatabase(pool), {
        circuitBreaker: { backoff: { baseMs: 200, capMs: 1_000 } },
      });
      for (let k = 0; k < 30; k++) await publishNext(`agg-${k % 6}`);
      await waitFor('some effects', async () => ((await effectCount()) >= 5 ? true : undefined));
      // Cut the database: connections reset, new ones refused, for 3 s, while 30 more arrive.
      await proxy.refuse();
      proxy.dropAll();
      for (let k = 0; k < 30; k++) await publishNext(`agg-${k % 6}`);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await proxy.restore();
      await waitFor(
        '60 effects',
        async () => ((await effectCount()) === 60 ? true : undefined),
        60_000,
      );
      expect(await checkEffects(db, test.schema, published)).toEqual({
        effects: 60,
        lost: [],
        doubled: [],
        outOfOrder: [],
      });
      const metrics = r.metrics();
      expect(metrics.pauses).toBeGreaterThanOrEqual(1);
      expect(metrics.requeued).toBeGreaterThanOrEqual(1);
      // The outage used no attempt: nothing went to a delay tier or the dead queue.
      expect(metrics).toMatchObject({ retried: 0, deadLettered: 0 });
      expect(events.some((e) => e.type === 'paused')).toBe(true);
      const dead = await drainQueue(
        broker.channel,
        topology.consumers['inventory-service']!.deadQueue,
      );
      expect(dead).toHaveLength(0);
    } finally {
      await runner?.stop();
      runner = undefined;
      await pool.end().catch(() => undefined);
    }
  });
});
