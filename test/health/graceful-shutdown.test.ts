/**
 * Graceful shutdown under load, across processes, on the real PostgreSQL and RabbitMQ: a service
 * (outbox relay + inbox consumer, `shutdownOnSignal`) gets SIGTERM while rows are still being
 * written, published and handled. It must exit 0 within its bound having finished, settled and
 * committed what it had; a second instance then takes over the rest. Counted at the end:
 *   - 0 lost: every written event has exactly one effect, in aggregate order, and every outbox
 *     row is SENT;
 *   - 0 double: neither instance's handler saw a message the inbox already had (a delivery that
 *     was handled but not acknowledged, or a row published but not marked SENT, would come back
 *     as such a duplicate — the inbox would hide it from the effects, the counter does not).
 * Then `shutdownOnSignal`'s own contract in process: the bound holds when a runner hangs (exit 1),
 * and a second signal does not start a second shutdown.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  migrateInbox,
  migrateOutbox,
  outboxStats,
  postgresDatabase,
  shutdownOnSignal,
  writeOutboxEvent,
  type Database,
} from 'evgen/runtime';
import { ORDER_EVENT, checkEffects, createEffectsTable } from '../support/effect-oracle.js';
import { TEST_DATABASE_URL, createTestSchema, type TestSchema } from '../support/postgres.js';
import {
  SAMPLE_TOPOLOGY,
  TEST_RABBITMQ_URL,
  createTestBroker,
  waitFor,
  type TestBroker,
} from '../support/rabbitmq.js';
import { spawnTypeScript } from '../support/typescript-child.js';

const SERVICE = fileURLToPath(new URL('./support/shutdown-service.ts', import.meta.url));

interface Finished {
  readonly type: 'shutdown-finished';
  readonly timedOut: boolean;
  readonly durationMs: number;
  readonly exitCode: number;
  readonly inFlightAtSignal: number;
  readonly consumer: { handled: number; duplicates: number; deadLettered: number };
  readonly relay: { published: number; dead: number };
}

interface Service {
  stop(): Promise<{ code: number | null; finished: Finished; output: string }>;
  kill(): void;
}

async function startService(schema: string, prefix: string): Promise<Service> {
  const child = spawnTypeScript(
    SERVICE,
    [TEST_DATABASE_URL, TEST_RABBITMQ_URL, schema, prefix],
    'ignore',
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await Promise.race([
    waitFor(
      'the service to be ready',
      () => (output.includes('ready\n') ? true : undefined),
      60_000,
    ),
    exited.then((code) => {
      throw new Error(`the service exited early (${code}): ${output}`);
    }),
  ]);
  return {
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      const line = output.split('\n').find((l) => l.includes('"shutdown-finished"'));
      if (line === undefined) throw new Error(`no shutdown report (exit ${code}): ${output}`);
      return { code, finished: JSON.parse(line) as Finished, output };
    },
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

describe('graceful shutdown', () => {
  let broker: TestBroker;
  let test: TestSchema;
  let db: Database;
  const services: Service[] = [];

  beforeEach(async () => {
    broker = await createTestBroker();
    await broker.declare(SAMPLE_TOPOLOGY, { tiers: [200] });
    test = await createTestSchema('evgen_shutdown');
    db = postgresDatabase(test.pool);
    await migrateOutbox(db, { schema: test.schema });
    await migrateInbox(db, { schema: test.schema });
    await createEffectsTable(db, test.schema);
  });

  afterEach(async () => {
    for (const service of services.splice(0)) service.kill();
    await broker.cleanup();
    await test.drop();
  });

  const effectCount = async () =>
    Number(
      (await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${test.schema}".effects`))
        .rows[0]!.n,
    );

  it('SIGTERM under load: exit 0 within the bound, then 0 lost and 0 double across two instances', async () => {
    const AGGREGATES = 30;
    const VERSIONS = 12;
    const total = AGGREGATES * VERSIONS;
    const written = new Map<string, string>();
    // The load: versions 1..12 of 30 aggregates, 10 events a transaction, written all along.
    const writing = (async () => {
      for (let version = 1; version <= VERSIONS; version++)
        for (let from = 0; from < AGGREGATES; from += 10) {
          await db.transaction(async (tx) => {
            for (let k = from; k < from + 10; k++) {
              const orderId = `order-${k}`;
              const envelope = await writeOutboxEvent(
                tx,
                ORDER_EVENT,
                { orderId, seq: version },
                { aggregateVersion: version },
                { schema: test.schema, notifyChannel: false },
              );
              written.set(envelope.messageId, orderId);
            }
          });
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
    })();

    const first = await startService(test.schema, broker.prefix);
    services.push(first);
    await waitFor(
      'some effects',
      async () => ((await effectCount()) >= 40 ? true : undefined),
      60_000,
    );
    const stopped = await first.stop();
    const atStop = await effectCount();
    expect(stopped.code, stopped.output).toBe(0);
    expect(stopped.finished).toMatchObject({ timedOut: false, exitCode: 0 });
    expect(stopped.finished.durationMs).toBeLessThan(10_000);
    expect(atStop).toBeLessThan(total); // it was stopped mid-run

    const second = await startService(test.schema, broker.prefix);
    services.push(second);
    await writing;
    await waitFor(
      'every event applied',
      async () => ((await effectCount()) >= total ? true : undefined),
      120_000,
    );
    const rest = await second.stop();
    expect(rest.code, rest.output).toBe(0);

    expect(await checkEffects(db, test.schema, written)).toEqual({
      effects: total,
      lost: [],
      doubled: [],
      outOfOrder: [],
    });
    expect(await outboxStats(db, { schema: test.schema })).toMatchObject({
      ready: 0,
      processing: 0,
      dead: 0,
      sent: total,
    });
    const runs = [stopped.finished, rest.finished];
    // Nothing handled twice: no delivery came back after being handled, no row was published twice.
    expect(runs.map((r) => r.consumer.duplicates)).toEqual([0, 0]);
    expect(runs.reduce((sum, r) => sum + r.consumer.handled, 0)).toBe(total);
    expect(runs.reduce((sum, r) => sum + r.relay.published, 0)).toBe(total);
    expect(runs.map((r) => r.consumer.deadLettered)).toEqual([0, 0]);
    console.log(
      `graceful shutdown: stopped after ${atStop}/${total} effects, ${stopped.finished.inFlightAtSignal} deliveries in flight at SIGTERM, took ${stopped.finished.durationMs} ms`,
    );
  });

  it('the bound holds: a runner that never stops makes the shutdown end at timeoutMs with exit code 1', async () => {
    const exits: number[] = [];
    const events: string[] = [];
    const closed: string[] = [];
    const shutdown = shutdownOnSignal({
      consumers: [{ stop: () => new Promise<void>(() => undefined) }],
      relays: [{ stop: async () => void closed.push('relay') }],
      close: [() => closed.push('pool')],
      timeoutMs: 300,
      signals: ['SIGUSR2'],
      exit: (code) => exits.push(code),
      onEvent: (event) => events.push(event.type),
    });
    try {
      process.kill(process.pid, 'SIGUSR2');
      process.kill(process.pid, 'SIGUSR2'); // a second signal: the same shutdown
      await waitFor('the exit', () => (exits.length >= 1 ? true : undefined), 5_000);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(exits).toEqual([1, 1]);
      expect(events).toEqual(['shutdown-started', 'shutdown-finished']);
      expect(closed).toEqual(['relay']); // close runs only after every runner stopped
      expect(await shutdown.shutdown()).toBe(1);
    } finally {
      shutdown.dispose();
    }
    expect(() => shutdownOnSignal({ timeoutMs: 0 })).toThrow(/positive/);
    expect(() => shutdownOnSignal({ timeoutMs: 100, relayTimeoutMs: 100 })).toThrow(/below/);
  });
});
