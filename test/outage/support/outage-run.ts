/**
 * One outage scenario end to end: events written into the outbox at a steady rate over ≥ 20
 * aggregates; relays and consumers in their own processes reaching the database (PostgreSQL or
 * MariaDB) and RabbitMQ through fault proxies; a fault script run meanwhile; then the oracle:
 * every messageId applied once, in aggregate order, nothing good in the dead queue, every outbox
 * row SENT, and how long it took to recover after the fault ended.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  migrateInbox,
  migrateOutbox,
  writeOutboxEvent,
  type ResolvedTopology,
} from 'evgen/runtime';
import { dialectOf } from '../../../src/runtime/db/sql-dialect.js';
import { uuidV7 } from '../../../src/runtime/uuid-v7.js';
import { ORDER_EVENT, checkEffects, createEffectsTable } from '../../support/effect-oracle.js';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js';
import { createTestBroker, drainQueue, type TestBroker } from '../../support/rabbitmq.js';
import { spawnTypeScript } from '../../support/typescript-child.js';
import { OUTAGE_TIERS, OUTAGE_TOPOLOGY } from './outage-topology.js';
import { openOutageStore, type OutageDialect, type OutageStore } from './outage-store.js';

const relayScript = fileURLToPath(new URL('./relay-process.ts', import.meta.url));
const consumerScript = fileURLToPath(new URL('./consumer-process.ts', import.meta.url));

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface ScenarioContext {
  /** The database, as the relays (`relay`) and the consumers (`consumer`) reach it. */
  readonly db: { readonly relay: FaultProxy; readonly consumer: FaultProxy };
  readonly amqp: { readonly relay: FaultProxy; readonly consumer: FaultProxy };
  /** SIGKILLs relay `index`; resolves when it is gone. */
  killRelay(index: number): Promise<void>;
  startRelay(index: number): Promise<void>;
  killConsumer(index: number): Promise<void>;
  startConsumer(index: number): Promise<void>;
  /** Records the moment the fault ended (recovery is measured from the last one). */
  faultEnded(): void;
  /** Rows PROCESSING now, for measuring how long a killed relay's rows stay stranded. */
  processingIds(): Promise<string[]>;
  /** Resolves when all `ids` are SENT; the time it took, in ms. */
  sentWithin(ids: readonly string[]): Promise<number>;
  /** Adds a measurement to the result. */
  note(text: string): void;
  /**
   * Crashes the scenario's private database server (SIGKILL), keeps it down for `downMs`, starts
   * it again (crash recovery) and resolves when it answers. Only with `privateServer`.
   */
  crashDatabase(downMs: number): Promise<void>;
}

export interface Scenario {
  readonly name: string;
  /** The database the outbox, the inbox and the effects live on. */
  readonly dialect: OutageDialect;
  /**
   * A server of the scenario's own (MariaDB only), which the fault script may crash and restart;
   * otherwise a database on the shared server, which is never stopped.
   */
  readonly privateServer?: boolean;
  readonly events: number;
  readonly aggregates: number;
  /** Events written per second while the scenario runs. */
  readonly ratePerSecond: number;
  readonly relays: number;
  readonly consumers: number;
  /** An aggregate whose every message the consumer rejects (must end in the dead queue, only it). */
  readonly poisonAggregate?: string;
  /** Recovery promised: progress within this long after the fault ended. */
  readonly recoveryLimitMs: number;
  /** Starts after 1 s of traffic. */
  fault(context: ScenarioContext): Promise<void>;
  /** Only in `npm run test:faults`. */
  readonly fullOnly?: boolean;
  /**
   * Relays and consumers run with the shipped backoff caps (relay 30 s, connector 5 s, breaker
   * 30 s) instead of the suite's short ones (1–2 s), as an operator runs them.
   */
  readonly defaultCaps?: boolean;
}

export interface ScenarioResult {
  readonly name: string;
  readonly events: number;
  readonly lost: number;
  readonly doubled: number;
  readonly outOfOrder: number;
  /** Dead letters that are not the poison aggregate's. */
  readonly goodDead: number;
  /** Poison messages found in the dead queue (each counted once). */
  readonly poisonDead: number;
  /** Poison messages written (each must be dead-lettered exactly once). */
  readonly poisonWritten: number;
  /** Dead letters beyond the first of the same poison message. */
  readonly poisonDeadTwice: number;
  /** Outbox rows not SENT at the end (PROCESSING, READY or DEAD). */
  readonly unsent: number;
  /**
   * ms from the end of the fault until every aggregate that still had events to apply applied
   * one again (the slowest aggregate's first effect after the fault; 0 when all were applied
   * before the fault ended).
   */
  readonly recoveryMs: number;
  /** Extra measurements reported by the fault script (e.g. kill → stranded rows SENT). */
  readonly notes: string[];
  readonly totalMs: number;
}

interface Child {
  process: ChildProcessWithoutNullStreams;
  output: string;
}

async function startChild(script: string, args: string[]): Promise<Child> {
  const child: Child = { process: spawnTypeScript(script, args, 'ignore'), output: '' };
  child.process.stdout.on('data', (chunk: Buffer) => (child.output += chunk.toString()));
  child.process.stderr.on('data', (chunk: Buffer) => (child.output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const onData = () => {
      if (child.output.includes('ready\n')) resolve();
    };
    child.process.stdout.on('data', onData);
    child.process.once('exit', (code) =>
      reject(new Error(`${script} exited early (${code}): ${child.output}`)),
    );
  });
  return child;
}

async function kill(child: Child | undefined): Promise<void> {
  if (child === undefined || child.process.exitCode !== null || child.process.signalCode !== null)
    return;
  const exited = new Promise((resolve) => child.process.once('exit', resolve));
  child.process.kill('SIGKILL');
  await exited;
}

/**
 * How long after `faultEnd` every aggregate that still had events to apply applied one again:
 * the slowest aggregate's first effect after the fault. Aggregates already complete when the
 * fault ended (no effect after it) do not count; when none had work left, 0.
 */
export function everyAggregateRecovered(
  progress: readonly { at: number; counts: ReadonlyMap<string, number> }[],
  faultEnd: number,
): number {
  const atEnd =
    [...progress].reverse().find((sample) => sample.at <= faultEnd)?.counts ?? new Map();
  const final = progress.at(-1)?.counts ?? new Map<string, number>();
  let slowest = 0;
  for (const [aggregate, total] of final) {
    const before = atEnd.get(aggregate) ?? 0;
    if (total <= before) continue;
    const moved = progress.find(
      (sample) => sample.at > faultEnd && (sample.counts.get(aggregate) ?? 0) > before,
    );
    if (moved !== undefined) slowest = Math.max(slowest, moved.at - faultEnd);
  }
  return slowest;
}

export async function runScenario(scenario: Scenario): Promise<ScenarioResult> {
  const started = Date.now();
  let store: OutageStore | undefined;
  let broker: TestBroker | undefined;
  const proxies: FaultProxy[] = [];
  const relays: (Child | undefined)[] = [];
  const consumers: (Child | undefined)[] = [];
  try {
    store = await openOutageStore(scenario.dialect, scenario.privateServer ?? false);
    const { db, schema } = store;
    const text = (column: string) => store!.text(column);
    const table = (name: string) => dialectOf(db).qualifiedName(schema, name);
    await migrateOutbox(db, { schema });
    await migrateInbox(db, { schema });
    await createEffectsTable(db, schema);
    broker = await createTestBroker();
    const topology: ResolvedTopology = await broker.declare(OUTAGE_TOPOLOGY, {
      tiers: OUTAGE_TIERS,
    });
    const deadQueue = topology.consumers['inventory-service']!.deadQueue;
    const dbRelay = await startFaultProxy({ targetPort: store.port });
    const dbConsumer = await startFaultProxy({ targetPort: store.port });
    const amqpRelay = await startFaultProxy({ targetPort: 5672 });
    const amqpConsumer = await startFaultProxy({ targetPort: 5672 });
    proxies.push(dbRelay, dbConsumer, amqpRelay, amqpConsumer);
    const dbUrl = (proxy: FaultProxy) => store!.urlThrough(proxy.port);
    const amqpUrl = (proxy: FaultProxy) => `amqp://guest:guest@127.0.0.1:${proxy.port}`;
    const prefix = broker.prefix;
    const caps = scenario.defaultCaps ? 'default' : 'short';

    const startRelay = async (index: number) => {
      relays[index] = await startChild(relayScript, [
        dbUrl(dbRelay),
        amqpUrl(amqpRelay),
        schema,
        prefix,
        caps,
      ]);
    };
    const startConsumer = async (index: number) => {
      consumers[index] = await startChild(consumerScript, [
        dbUrl(dbConsumer),
        amqpUrl(amqpConsumer),
        schema,
        prefix,
        scenario.poisonAggregate ?? '-',
        caps,
      ]);
    };
    await Promise.all([
      ...Array.from({ length: scenario.relays }, (_, i) => startRelay(i)),
      ...Array.from({ length: scenario.consumers }, (_, i) => startConsumer(i)),
    ]);

    // Progress: the effects count over time, to measure recovery after the fault. The test's own
    // connections go to the server directly; while a private server is down, they fail and retry.
    const effectCount = async () =>
      Number(
        (await db.query<{ n: unknown }>(`SELECT count(*) AS n FROM ${table('effects')}`)).rows[0]!
          .n,
      );
    // Per aggregate: effects applied so far, sampled every 100 ms (recovery is per aggregate).
    const perAggregate = async () => {
      const { rows } = await db.query<{ aggregate_id: string; n: unknown }>(
        `SELECT aggregate_id, count(*) AS n FROM ${table('effects')} GROUP BY aggregate_id`,
      );
      return new Map(rows.map((row) => [row.aggregate_id, Number(row.n)]));
    };
    const progress: { at: number; counts: Map<string, number> }[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const counts = await perAggregate().catch(() => undefined);
        if (counts !== undefined) progress.push({ at: Date.now(), counts });
        await sleep(100);
      }
    })();

    /**
     * Writes one event, retrying while the database is unreachable (a crashed private server). The
     * messageId is fixed before the first try, so a commit whose answer was lost is found on the
     * retry instead of being written a second time.
     */
    const writeEvent = async (orderId: string, seq: number): Promise<string> => {
      const messageId = uuidV7();
      for (let attempt = 0; ; attempt++) {
        try {
          if (attempt > 0) {
            const { rows } = await db.query(
              `SELECT 1 AS found FROM ${table('outbox_event')} WHERE event_id = ${dialectOf(db).param(1)}`,
              [messageId],
            );
            if (rows.length > 0) return messageId;
          }
          await db.transaction((tx) =>
            writeOutboxEvent(
              tx,
              ORDER_EVENT,
              { orderId, seq },
              { messageId },
              { schema, notifyChannel: false, assignAggregateVersion: true },
            ),
          );
          return messageId;
        } catch (error) {
          if (!scenario.privateServer || attempt > 600) throw error;
          await sleep(100);
        }
      }
    };

    // The writer: ratePerSecond events, round-robin over the aggregates, directly (no proxy).
    const expected = new Map<string, string>();
    const poisonIds = new Set<string>();
    const writer = (async () => {
      const interval = 1_000 / scenario.ratePerSecond;
      const begin = Date.now();
      for (let i = 0; i < scenario.events; i++) {
        const orderId =
          scenario.poisonAggregate !== undefined && i % scenario.aggregates === 0
            ? scenario.poisonAggregate
            : `order-${i % scenario.aggregates}`;
        const messageId = await writeEvent(orderId, i);
        expected.set(messageId, orderId);
        if (orderId === scenario.poisonAggregate) poisonIds.add(messageId);
        const due = begin + (i + 1) * interval;
        if (due > Date.now()) await sleep(due - Date.now());
      }
    })();

    let faultEnd = 0;
    const notes: string[] = [];
    const context: ScenarioContext = {
      db: { relay: dbRelay, consumer: dbConsumer },
      amqp: { relay: amqpRelay, consumer: amqpConsumer },
      killRelay: (index) => kill(relays[index]),
      startRelay,
      killConsumer: (index) => kill(consumers[index]),
      startConsumer,
      faultEnded: () => {
        faultEnd = Date.now();
      },
      note: (text) => notes.push(text),
      async processingIds() {
        const { rows } = await db.query<{ id: string }>(
          `SELECT ${text('id')} AS id FROM ${table('outbox_event')} WHERE status = 'PROCESSING'`,
        );
        return rows.map((row) => row.id);
      },
      async sentWithin(ids) {
        const from = Date.now();
        if (ids.length === 0) return 0;
        for (;;) {
          const { rows } = await db.query<{ n: unknown }>(
            `SELECT count(*) AS n FROM ${table('outbox_event')} WHERE ${store!.idIn('id', 1)} AND status <> 'SENT'`,
            [ids],
          );
          if (Number(rows[0]!.n) === 0) return Date.now() - from;
          await sleep(50);
        }
      },
      async crashDatabase(downMs) {
        const server = store!.server;
        if (server === undefined) throw new Error(`${scenario.name}: no private server to crash`);
        const before = await effectCount();
        const killed = Date.now();
        await server.stop('SIGKILL');
        await sleep(downMs);
        await server.start();
        const answering = Date.now();
        notes.push(
          `crash at ${before} effects; answering again ${((answering - killed) / 1000).toFixed(1)} s after the SIGKILL (${downMs / 1000} s down)`,
        );
      },
    };
    const faultDone = (async () => {
      await sleep(1_000);
      await scenario.fault(context);
      if (faultEnd === 0) context.faultEnded();
    })();
    await Promise.all([writer, faultDone]);

    // Converge: every good event applied, every row SENT, and nothing left in flight on the
    // consumer side (work queue and retry tiers empty), so the dead queue is read only once no
    // copy of a poison message can still reach it.
    const good = scenario.events - poisonIds.size;
    const routes = topology.consumers['inventory-service']!;
    const messagesIn = async (queue: string) =>
      (await broker!.channel.checkQueue(queue)).messageCount;
    const unsentRows = async () =>
      Number(
        (
          await db.query<{ n: unknown }>(
            `SELECT count(*) AS n FROM ${table('outbox_event')} WHERE status <> 'SENT'`,
          )
        ).rows[0]!.n,
      );
    const deadline = Date.now() + 180_000;
    for (;;) {
      const count = await effectCount();
      const unsent = await unsentRows();
      let inFlight = await messagesIn(routes.queue);
      for (const tier of routes.tiers) inFlight += await messagesIn(tier.queue);
      const dead = await messagesIn(deadQueue);
      if (count >= good && unsent === 0 && inFlight === 0 && dead >= poisonIds.size) break;
      if (Date.now() > deadline) break;
      await sleep(200);
    }
    // A little longer, so a late duplicate would show up.
    await sleep(1_000);
    watching = false;
    await watcher;

    const report = await checkEffects(db, schema, expected, poisonIds);
    const unsent = await unsentRows();
    const dead = await drainQueue(broker.channel, deadQueue);
    const deadIds = dead.map((letter) => String(letter.properties.messageId));
    const poisonLetters = deadIds.filter((id) => poisonIds.has(id));
    return {
      name: scenario.name,
      events: scenario.events,
      lost: report.lost.length,
      doubled: report.doubled.length,
      outOfOrder: report.outOfOrder.length,
      goodDead: deadIds.filter((id) => !poisonIds.has(id)).length,
      poisonDead: new Set(poisonLetters).size,
      poisonWritten: poisonIds.size,
      poisonDeadTwice: poisonLetters.length - new Set(poisonLetters).size,
      unsent,
      recoveryMs: everyAggregateRecovered(progress, faultEnd),
      notes,
      totalMs: Date.now() - started,
    };
  } finally {
    await Promise.all([...relays, ...consumers].map((child) => kill(child)));
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await broker?.cleanup();
    await store?.drop();
  }
}
