/**
 * The outage matrix. Durations shrink in the CI subset (`full` false); the full matrix runs the
 * faults at the lengths the README's table reports.
 */
import { sleep, type Scenario, type ScenarioContext } from './outage-run.js';

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

export function OUTAGE_SCENARIOS(full: boolean): Scenario[] {
  const events = full ? 2_000 : 300;
  const rate = full ? 100 : 100;
  const base = { events, aggregates: 24, ratePerSecond: rate, relays: 1, consumers: 1 };
  const s = (seconds: number, ciSeconds: number) => (full ? seconds : ciSeconds) * 1_000;
  return [
    {
      ...base,
      name: `relay SIGKILL ×${full ? 10 : 2} (2 relays)`,
      relays: 2,
      recoveryLimitMs: 10_000,
      fault: (c) => killRelays(c, full ? 10 : 2, 2),
    },
    {
      ...base,
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
      name: `broker refused ${full ? 5 : 3} s (both sides)`,
      recoveryLimitMs: 10_000,
      fault: (c) => cut(c, [c.amqp.relay, c.amqp.consumer], s(5, 3)),
    },
    {
      ...base,
      name: 'broker refused 30 s (both sides)',
      fullOnly: true,
      recoveryLimitMs: 15_000,
      fault: (c) => cut(c, [c.amqp.relay, c.amqp.consumer], 30_000),
    },
    {
      ...base,
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
      name: `PostgreSQL cut ${full ? 5 : 3} s, relay side`,
      recoveryLimitMs: 10_000,
      fault: (c) => cut(c, [c.pg.relay], s(5, 3)),
    },
    {
      ...base,
      name: `PostgreSQL cut ${full ? 5 : 3} s, consumer side`,
      recoveryLimitMs: 10_000,
      fault: (c) => cut(c, [c.pg.consumer], s(5, 3)),
    },
    {
      ...base,
      name: 'PostgreSQL cut 90 s, relay side',
      fullOnly: true,
      recoveryLimitMs: 15_000,
      fault: (c) => cut(c, [c.pg.relay], 90_000),
    },
    {
      ...base,
      name: 'PostgreSQL cut 90 s, consumer side',
      fullOnly: true,
      recoveryLimitMs: 15_000,
      fault: (c) => cut(c, [c.pg.consumer], 90_000),
    },
    {
      ...base,
      // maxAttempts 10 with the relay's message backoff (1 s doubling) is spent in ~17 min; the
      // unavailability path never touches it, so 120 s already shows no row goes DEAD.
      name: 'broker unreachable 120 s (relay side, > consumer retry budget)',
      fullOnly: true,
      recoveryLimitMs: 15_000,
      fault: (c) => cut(c, [c.amqp.relay], 120_000),
    },
    {
      ...base,
      name: '4 relays, relay SIGKILL ×4',
      relays: 4,
      fullOnly: true,
      recoveryLimitMs: 10_000,
      fault: (c) => killRelays(c, 4, 4),
    },
    {
      ...base,
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
      name: 'poison aggregate while others flow',
      poisonAggregate: 'poison',
      recoveryLimitMs: 10_000,
      async fault(c) {
        c.faultEnded();
      },
    },
    {
      ...base,
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
}
