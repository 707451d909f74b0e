/**
 * The broker faults the Pulsar fault tests inject into a broker of their own
 * (`startExtraPulsarBroker`, never the shared one), how they measure recovery, and the set-up
 * they share: the private broker, a schema with inbox and effects (and outbox), a topic under a
 * prefix of its own, a client, and an inbox-guarded runner recording effects.
 *
 * - SIGKILL: the JVM dies (sockets reset, nothing flushed), stays down `holdMs`, and is started
 *   again on the same ports and data dir; the fault ends when the restarted broker's admin API
 *   answers.
 * - SIGSTOP: the JVM is frozen for `holdMs` (sockets stay open, nothing answers, nobody is told),
 *   then continued with SIGCONT; the fault ends at SIGCONT.
 *
 * Recovery is measured from the end of the fault to the first moment every aggregate has made
 * progress again (one more row SENT, one more effect): an aggregate left stuck behind a socket
 * that never came back would show as no recovery at all, not as a fast one.
 */
import { cpus, loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  createPulsarConsumerRunner,
  migrateInbox,
  migrateOutbox,
  postgresDatabase,
  pulsarConsumerTopics,
  pulsarWebSocketClient,
  type Database,
  type PulsarClient,
  type PulsarConsumerRunner,
  type PulsarConsumerRunnerEvent,
} from 'evgen/runtime';
import { createEffectsTable, effectConsumer } from '../../support/effect-oracle.js';
import { createTestSchema, type TestSchema } from '../../support/postgres.js';
import { startExtraPulsarBroker, type ExtraPulsarBroker } from '../../support/pulsar/broker.js';
import { createTestPulsar } from '../../support/pulsar/test-pulsar.js';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The consumer (inbox name) of every fault test's effect runner. */
const CONSUMER = 'inventory-service';

/**
 * Gives the calling test file a broker of its own (started before its tests, destroyed after)
 * and `closers`, run last-first after each test whatever happened.
 */
export function privateFaultBroker(): {
  readonly broker: () => ExtraPulsarBroker;
  readonly closers: (() => Promise<unknown>)[];
} {
  let broker: ExtraPulsarBroker | undefined;
  beforeAll(async () => {
    broker = await startExtraPulsarBroker();
  }, 180_000);
  afterAll(async () => {
    await broker?.destroy();
  }, 60_000);
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  }, 60_000);
  return { broker: () => broker!, closers };
}

/** One fault test's world: its schema (inbox, effects, outbox if asked), topic and client. */
export interface FaultFixture {
  readonly pg: TestSchema;
  readonly db: Database;
  readonly schema: string;
  /** `order.events` under a prefix of this test's own. */
  readonly topic: string;
  /** The prefix, as routes and relay publishers take it. */
  readonly prefix: string;
  readonly client: PulsarClient;
  /** Effects applied per aggregate so far. */
  readonly effects: () => Promise<Progress>;
  /** `aggregate_id, n` rows of `sql` as progress per aggregate. */
  readonly perAggregate: (sql: string) => Promise<Progress>;
}

export async function faultFixture(
  broker: ExtraPulsarBroker,
  closers: (() => Promise<unknown>)[],
  name: string,
  options: { readonly outbox?: boolean } = {},
): Promise<FaultFixture> {
  const pulsar = await createTestPulsar(broker.webUrl);
  const pg = await createTestSchema(name);
  closers.push(() => pg.drop());
  const db = postgresDatabase(pg.pool);
  const { schema } = pg;
  if (options.outbox === true) await migrateOutbox(db, { schema });
  await migrateInbox(db, { schema });
  await createEffectsTable(db, schema);
  const topic = pulsar.topic('order.events');
  const prefix = topic.slice('persistent://public/default/'.length, -'order.events'.length);
  // A generous handshake bound: on a loaded machine a fresh broker took over 10 s to open the
  // first subscriptions.
  const client = pulsarWebSocketClient({ webServiceUrl: broker.webUrl, connectTimeoutMs: 30_000 });
  const perAggregate = async (sql: string): Promise<Progress> => {
    const { rows } = await pg.pool.query<{ aggregate_id: string; n: string }>(sql);
    return new Map(rows.map((row) => [row.aggregate_id, Number(row.n)]));
  };
  return {
    pg,
    db,
    schema,
    topic,
    prefix,
    client,
    perAggregate,
    effects: () =>
      perAggregate(
        `SELECT aggregate_id, count(*) AS n FROM "${schema}".effects GROUP BY aggregate_id`,
      ),
  };
}

/**
 * Starts an inbox-guarded Pulsar consumer runner on the fixture's topic recording one effect per
 * message as it comes (no `inOrder` guard), each taking the handler `handlerMs`; collects its
 * dead-lettered and retried events. Stopped by the closers.
 */
export async function startEffectRunner(
  f: FaultFixture,
  closers: (() => Promise<unknown>)[],
  options: { readonly maxUnsettled: number; readonly handlerMs?: number },
): Promise<{ runner: PulsarConsumerRunner; events: PulsarConsumerRunnerEvent[] }> {
  const consumer = effectConsumer(f.db, f.schema, CONSUMER, undefined, { ordered: false });
  const { handlerMs = 0 } = options;
  const events: PulsarConsumerRunnerEvent[] = [];
  const runner = createPulsarConsumerRunner({
    client: f.client,
    routes: pulsarConsumerTopics(CONSUMER, [f.topic], {
      prefix: f.prefix,
      retryTiersMs: [200, 1_000],
    }),
    maxUnsettled: options.maxUnsettled,
    handler:
      handlerMs === 0
        ? consumer
        : {
            name: consumer.name,
            async handle(raw, context) {
              await sleep(handlerMs);
              return consumer.handle(raw, context);
            },
          },
    onEvent: (event) => {
      if (event.type === 'dead-lettered' || event.type === 'retried') events.push(event);
    },
  });
  await runner.start();
  closers.push(() => runner.stop());
  return { runner, events };
}

export interface BrokerFaultResult {
  /** Date.now() when the fault ended (restarted broker answering, or SIGCONT sent). */
  readonly endedAt: number;
  /** SIGKILL only: ms from spawning the restarted JVM to its admin API answering. */
  readonly restartMs?: number;
  /**
   * ms from the end of the fault until a new WebSocket producer on a new topic had a message
   * stored: when the broker serves clients again. A restarted broker answers its admin API
   * seconds before it does (it recovers its topics' ledgers first), so this is the part of a
   * recovery time that is the broker's own.
   */
  readonly serving: Promise<number>;
}

export interface BrokerFault {
  readonly name: string;
  inject(broker: ExtraPulsarBroker): Promise<BrokerFaultResult>;
}

export const BROKER_KILL_HOLD_MS = 2_000;
export const BROKER_PAUSE_HOLD_MS = 6_000;

export const BROKER_FAULTS: readonly BrokerFault[] = [
  {
    name: 'SIGKILL, restarted on the same data dir',
    async inject(broker) {
      await broker.kill();
      await sleep(BROKER_KILL_HOLD_MS);
      const began = Date.now();
      await broker.restart();
      const endedAt = Date.now();
      return { endedAt, restartMs: endedAt - began, serving: servingAgain(broker, endedAt) };
    },
  },
  {
    name: 'SIGSTOP, then SIGCONT',
    async inject(broker) {
      broker.pause();
      await sleep(BROKER_PAUSE_HOLD_MS);
      broker.resume();
      const endedAt = Date.now();
      return { endedAt, serving: servingAgain(broker, endedAt) };
    },
  },
];

/** See `BrokerFaultResult.serving`; the probe topic goes with the broker's data dir. */
async function servingAgain(broker: ExtraPulsarBroker, endedAt: number): Promise<number> {
  const client = pulsarWebSocketClient({ webServiceUrl: broker.webUrl, connectTimeoutMs: 5_000 });
  const topic = `persistent://public/default/evgen-fault-probe-${randomBytes(4).toString('hex')}`;
  for (;;) {
    try {
      const producer = await client.producer(topic, { sendTimeoutMs: 5_000 });
      try {
        await producer.send({ key: 'probe', payload: Buffer.from('probe') });
        return Date.now() - endedAt;
      } finally {
        await producer.close();
      }
    } catch {
      if (Date.now() - endedAt > 120_000) return Number.NaN;
      await sleep(100);
    }
  }
}

/** Per aggregate, how far it got (rows SENT, effects applied). */
export type Progress = ReadonlyMap<string, number>;

/**
 * Resolves with the ms from `endedAt` until every aggregate of `aggregates` has progressed past
 * where it was when the fault ended (`read` polled every 50 ms); fails after `timeoutMs`, naming
 * the aggregates that did not move. An aggregate that had already reached `perAggregate` when the
 * fault ended has nothing left to do and is not waited for (it cannot move again).
 */
export async function recoveryTime(
  what: string,
  endedAt: number,
  aggregates: readonly string[],
  read: () => Promise<Progress>,
  options: { readonly perAggregate?: number; readonly timeoutMs?: number } = {},
): Promise<number> {
  const { perAggregate = Number.POSITIVE_INFINITY, timeoutMs = 120_000 } = options;
  const baseline = await read();
  const pending = aggregates.filter((a) => (baseline.get(a) ?? 0) < perAggregate);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const now = await read();
    const stuck = pending.filter((a) => (now.get(a) ?? 0) <= (baseline.get(a) ?? 0));
    if (stuck.length === 0) return Date.now() - endedAt;
    if (Date.now() > deadline)
      throw new Error(
        `${what}: ${stuck.length} aggregate(s) made no progress within ${timeoutMs} ms of the fault's end: ${stuck.join(', ')}`,
      );
    await sleep(50);
  }
}

/** Polls `check` until it resolves true, or fails after `timeoutMs`. */
export async function until(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** The 1-minute load average and core count, for the measurements' context. */
export function machineLoad(): string {
  return `load ${loadavg()[0]!.toFixed(2)} on ${cpus().length} cores`;
}
