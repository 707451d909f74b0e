/**
 * The outage matrix, on PostgreSQL and on MariaDB. Durations shrink in the CI subset (`full`
 * false); the full matrix runs the faults at the lengths docs/operations/reliability.md reports. MariaDB rows
 * are named `MariaDB: …`; the CI subset runs only a few of them (relay kill, consumer kill, a 5 s
 * cut of both sides, a crash and restart of a private server), the full matrix all of them.
 */
import { sleep, type Scenario, type ScenarioContext } from './outage-run.js';
import type { OutageDialect } from './outage-store.js';

/** Cuts a proxy: open connections reset, new ones refused, for `ms`. */
async function cut(
  context: ScenarioContext,
  proxies: readonly { refuse(): Promise<void>; dropAll(): void; restore(): Promise<void> }[],
  ms: number,
) {
  for (const proxy of proxies) {
    await proxy.refuse();
    proxy.dropAll();
  }
  await sleep(ms);
  for (const proxy of proxies) await proxy.restore();
  context.faultEnded();
}

async function killRelays(context: ScenarioContext, times: number, relays: number) {
  const recoveries: number[] = [];
  for (let n = 0; n < times; n++) {
    const index = n % relays;
    await sleep(700);
    await context.killRelay(index);
    const stranded = await context.processingIds();
    // The survivors take the killed relay's rows once its lease ran out.
    recoveries.push(await context.sentWithin(stranded));
    await context.startRelay(index);
  }
  context.faultEnded();
  context.note(
    `kill → stranded rows SENT by another relay: max ${(Math.max(...recoveries) / 1000).toFixed(1)} s`,
  );
}

/** One row per fault kind run again with the shipped backoff caps; in CI only the broker refusal. */
const DEFAULT_CAPS_KINDS: ReadonlyMap<string, 'ci' | 'full'> = new Map([
  ['broker-refused', 'ci'],
  ['relay-kill', 'full'],
  ['consumer-kill', 'full'],
  ['broker-blackhole', 'full'],
  ['db-cut-relay', 'full'],
  ['db-cut-consumer', 'full'],
  ['latency', 'full'],
]);

/**
 * The relay's outage backoff grows to 30 s and the connector's to 5 s with the shipped caps, so
 * these rows allow recovery within the relay's cap plus a poll and a reconnect.
 */
const DEFAULT_CAPS_RECOVERY_MS = 40_000;

function withDefaultCaps<T extends Scenario & { id: string }>(rows: readonly T[]): T[] {
  return rows
    .filter((row) => DEFAULT_CAPS_KINDS.has(row.id))
    .map((row) => ({
      ...row,
      name: `${row.name}, default backoff caps`,
      defaultCaps: true,
      fullOnly: DEFAULT_CAPS_KINDS.get(row.id) === 'full',
      recoveryLimitMs: Math.max(row.recoveryLimitMs, DEFAULT_CAPS_RECOVERY_MS),
    }));
}

export function OUTAGE_SCENARIOS(full: boolean): Scenario[] {
  return [
    ...scenariosOn('postgres', full),
    ...scenariosOn('mariadb', full),
    ...mariadbServerScenarios(full),
  ];
}

/** The MariaDB rows in the CI subset (with the server crash below); the others are `fullOnly`. */
const MARIADB_CI = new Set(['relay-kill', 'consumer-kill', 'db-cut-both']);

function scenariosOn(dialect: OutageDialect, full: boolean): Scenario[] {
  const events = full ? 2_000 : 300;
  const rate = full ? 100 : 100;
  const base = { dialect, events, aggregates: 24, ratePerSecond: rate, relays: 1, consumers: 1 };
  const s = (seconds: number, ciSeconds: number) => (full ? seconds : ciSeconds) * 1_000;
  // MariaDB rows are prefixed `MariaDB: ` as a whole.
  const database = dialect === 'mariadb' ? 'database' : 'PostgreSQL';
  const rows: (Scenario & { id: string })[] = [
    {
      ...base,
      id: 'relay-kill',
      name: `relay SIGKILL ×${full ? 10 : 2} (2 relays)`,
      relays: 2,
      recoveryLimitMs: 10_000,
      fault: (c) => killRelays(c, full ? 10 : 2, 2),
    },
    {
      ...base,
      id: 'consumer-kill',
      name: `consumer SIGKILL ×${full ? 10 : 2}`,
      recoveryLimitMs: 10_000,
      async fault(c) {
        for (let n = 0; n < (full ? 10 : 2); n++) {
          await sleep(700);
          await c.killConsumer(0);
          await c.startConsumer(0);
        }
        c.faultEnded();
      },
    },
    {
      ...base,
      id: 'broker-refused',
      name: `broker refused ${full ? 5 : 3} s (both sides)`,
      recoveryLimitMs: 10_000,
      fault: (c) => cut(c, [c.amqp.relay, c.amqp.consumer], s(5, 3)),
    },
    {
      ...base,
      id: 'broker-refused-30',
      name: 'broker refused 30 s (both sides)',
      fullOnly: true,
      recoveryLimitMs: 15_000,
      fault: (c) => cut(c, [c.amqp.relay, c.amqp.consumer], 30_000),
    },
    {
      ...base,
      id: 'broker-blackhole',
      name: 'broker silent drop 30 s (blackhole, both sides)',
      fullOnly: true,
      recoveryLimitMs: 30_000,
      async fault(c) {
        c.amqp.relay.blackhole();
        c.amqp.consumer.blackhole();
        await sleep(30_000);
        await c.amqp.relay.restore();
        await c.amqp.consumer.restore();
        c.faultEnded();
      },
    },
    {
      ...base,
      id: 'db-cut-relay',
      name: `${database} cut ${full ? 5 : 3} s, relay side`,
      recoveryLimitMs: 10_000,
      fault: (c) => cut(c, [c.db.relay], s(5, 3)),
    },
    {
      ...base,
      id: 'db-cut-consumer',
      name: `${database} cut ${full ? 5 : 3} s, consumer side`,
      recoveryLimitMs: 10_000,
      fault: (c) => cut(c, [c.db.consumer], s(5, 3)),
    },
    {
      ...base,
      // Only on MariaDB: its CI subset covers both sides with one 5 s cut.
      id: 'db-cut-both',
      name: `${database} cut 5 s, relay and consumer side`,
      recoveryLimitMs: 10_000,
      fault: (c) => cut(c, [c.db.relay, c.db.consumer], 5_000),
    },
    {
      ...base,
      id: 'db-cut-relay-90',
      name: `${database} cut 90 s, relay side`,
      fullOnly: true,
      recoveryLimitMs: 15_000,
      fault: (c) => cut(c, [c.db.relay], 90_000),
    },
    {
      ...base,
      id: 'db-cut-consumer-90',
      name: `${database} cut 90 s, consumer side`,
      fullOnly: true,
      recoveryLimitMs: 15_000,
      fault: (c) => cut(c, [c.db.consumer], 90_000),
    },
    {
      ...base,
      // maxAttempts 10 with the relay's message backoff (1 s doubling) is spent in ~17 min; the
      // unavailability path never touches it, so 120 s already shows no row goes DEAD.
      id: 'broker-unreachable',
      name: 'broker unreachable 120 s (relay side, > consumer retry budget)',
      fullOnly: true,
      recoveryLimitMs: 15_000,
      fault: (c) => cut(c, [c.amqp.relay], 120_000),
    },
    {
      ...base,
      id: 'four-relays',
      name: '4 relays, relay SIGKILL ×4',
      relays: 4,
      fullOnly: true,
      recoveryLimitMs: 10_000,
      fault: (c) => killRelays(c, 4, 4),
    },
    {
      ...base,
      id: 'two-consumers',
      name: '2 consumers, one SIGKILLed ×3',
      consumers: 2,
      recoveryLimitMs: 10_000,
      fullOnly: true,
      async fault(c) {
        for (let n = 0; n < 3; n++) {
          await sleep(1_000);
          await c.killConsumer(0);
          await c.startConsumer(0);
        }
        c.faultEnded();
      },
    },
    {
      ...base,
      id: 'poison',
      name: 'poison aggregate while others flow',
      poisonAggregate: 'poison',
      recoveryLimitMs: 10_000,
      async fault(c) {
        c.faultEnded();
      },
    },
    {
      ...base,
      id: 'latency',
      name: 'broker latency +200 ms (both sides)',
      recoveryLimitMs: 10_000,
      async fault(c) {
        c.amqp.relay.latency(200);
        c.amqp.consumer.latency(200);
        await sleep(s(20, 4));
        await c.amqp.relay.restore();
        await c.amqp.consumer.restore();
        c.faultEnded();
      },
    },
  ];
  if (dialect === 'postgres') {
    const plain = rows.filter((row) => row.id !== 'db-cut-both');
    return [...plain, ...withDefaultCaps(plain)].map(({ id: _id, ...row }) => row);
  }
  return rows.map(({ id, ...row }) => ({
    ...row,
    name: `MariaDB: ${row.name}`,
    fullOnly: row.fullOnly === true || !MARIADB_CI.has(id),
    // The CI subset's MariaDB cut is 5 s whatever the PostgreSQL rows use.
    ...(id === 'db-cut-relay' || id === 'db-cut-consumer'
      ? {
          name: `MariaDB: ${database} cut 5 s, ${id === 'db-cut-relay' ? 'relay' : 'consumer'} side`,
          fault: (c: ScenarioContext) =>
            cut(c, [id === 'db-cut-relay' ? c.db.relay : c.db.consumer], 5_000),
        }
      : {}),
  }));
}

/**
 * A private MariaDB server (never the shared one) SIGKILLed under running relays and consumers,
 * down for a few seconds, then started again: InnoDB's crash recovery, every connection of every
 * process lost at once, the writer's commits failing until it is back.
 */
function mariadbServerScenarios(full: boolean): Scenario[] {
  const times = full ? 3 : 1;
  return [
    {
      dialect: 'mariadb',
      privateServer: true,
      name: `MariaDB: server SIGKILLed and restarted ×${times} (2 relays)`,
      events: full ? 2_000 : 300,
      aggregates: 24,
      ratePerSecond: 100,
      relays: 2,
      consumers: 1,
      // In the CI subset too: the only test of a server crash under running relays and consumers.
      fullOnly: false,
      recoveryLimitMs: 15_000,
      async fault(c) {
        // Crash while effects are flowing (the relays and consumers need a moment to start up).
        for (let n = 0; n < times; n++) {
          await sleep(n === 0 ? 1_500 : 4_000);
          await c.crashDatabase(2_000);
        }
        c.faultEnded();
      },
    },
  ];
}
