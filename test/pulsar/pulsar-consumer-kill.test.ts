/**
 * Consumer SIGKILL with a second consumer in the subscription (issue #36 faults): two Pulsar
 * consumer runners in child processes share the Key_Shared subscription; while 600 messages of
 * 12 aggregates are consumed, one is killed with SIGKILL. The messages it held unacknowledged go
 * to the survivor: the effect oracle finds 0 lost, 0 applied twice and every aggregate in version
 * order, and nothing was dead-lettered. The time from the kill until every aggregate (the
 * victim's too) has a new effect is printed, not asserted.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import {
  createEnvelope,
  envelopeToPulsarMessage,
  migrateInbox,
  postgresDatabase,
  pulsarConsumerTopics,
  pulsarWebSocketClient,
} from 'evgen/runtime';
import { checkEffects, createEffectsTable, ORDER_EVENT } from '../support/effect-oracle.js';
import { createTestSchema, TEST_DATABASE_URL } from '../support/postgres.js';
import { createTestPulsar } from '../support/pulsar/test-pulsar.js';
import { spawnTypeScript } from '../support/typescript-child.js';
import { machineLoad, recoveryTime } from './support/broker-faults.js';

const memberScript = fileURLToPath(new URL('./support/pulsar-member.ts', import.meta.url));
const CONSUMER = 'inventory-service';
const AGGREGATES = 12;
const PER_AGGREGATE = 50;

interface Member {
  readonly process: ReturnType<typeof spawnTypeScript>;
  output: string;
}

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

it('a consumer SIGKILLed with a second one in the subscription: 0 lost, 0 doubled, order kept', async () => {
  const pulsar = await createTestPulsar();
  closers.push(() => pulsar.cleanup());
  const pg = await createTestSchema('evgen_pulsar_kill');
  closers.push(() => pg.drop());
  const db = postgresDatabase(pg.pool);
  await migrateInbox(db, { schema: pg.schema });
  await createEffectsTable(db, pg.schema);
  const topic = pulsar.topic('order.events');
  const prefix = topic.slice('persistent://public/default/'.length, -'order.events'.length);
  const routes = pulsarConsumerTopics(CONSUMER, [topic], { prefix, retryTiersMs: [200, 1_000] });
  pulsar.topic(`${CONSUMER}.retry.200ms`);
  pulsar.topic(`${CONSUMER}.retry.1s`);
  pulsar.topic(`${CONSUMER}.dlt`);

  const start = async (): Promise<Member> => {
    const member: Member = {
      process: spawnTypeScript(
        memberScript,
        [pulsar.webUrl, TEST_DATABASE_URL, pg.schema, JSON.stringify(routes), '10'],
        'ignore',
      ),
      output: '',
    };
    member.process.stdout.on('data', (chunk: Buffer) => (member.output += chunk.toString()));
    member.process.stderr.on('data', (chunk: Buffer) => (member.output += chunk.toString()));
    closers.push(async () => {
      if (member.process.exitCode === null && member.process.signalCode === null) {
        const exited = new Promise((resolve) => member.process.once('exit', resolve));
        member.process.kill('SIGKILL');
        await exited;
      }
    });
    await new Promise<void>((resolve, reject) => {
      member.process.stdout.on('data', () => {
        if (member.output.includes('ready\n')) resolve();
      });
      member.process.once('exit', (code, signal) =>
        reject(new Error(`member exited early (${code ?? signal}): ${member.output}`)),
      );
    });
    return member;
  };
  const [victim, survivor] = await Promise.all([start(), start()]);

  const producer = await pulsarWebSocketClient({ webServiceUrl: pulsar.webUrl }).producer(topic);
  closers.push(() => producer.close());
  const expected = new Map<string, string>();
  // Produced while the kill is awaited below: the members consume as fast as messages arrive, so
  // waiting for the whole batch first would let them finish most aggregates before the kill.
  const produced = (async () => {
    for (let version = 1; version <= PER_AGGREGATE; version++) {
      const sends: Promise<string>[] = [];
      for (let a = 0; a < AGGREGATES; a++) {
        const orderId = `order-${a}`;
        const envelope = createEnvelope(
          ORDER_EVENT,
          { orderId, seq: version },
          { aggregateVersion: version },
        );
        expected.set(envelope.messageId, orderId);
        sends.push(producer.send(envelopeToPulsarMessage(envelope)));
      }
      await Promise.all(sends);
    }
  })();
  const total = AGGREGATES * PER_AGGREGATE;
  const effects = async () =>
    Number(
      (await pg.pool.query<{ n: string }>(`SELECT count(*) AS n FROM "${pg.schema}".effects`))
        .rows[0]!.n,
    );
  // Kill one while both are busy: about a sixth of the work done.
  let done: number;
  const startedAt = Date.now();
  for (;;) {
    done = await effects();
    if (done >= total / 6) break;
    if (Date.now() - startedAt > 60_000) throw new Error(`only ${done} effects after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const exited = new Promise((resolve) => victim.process.once('exit', resolve));
  victim.process.kill('SIGKILL');
  await exited;
  const killedAt = done;
  const endedAt = Date.now();
  const aggregates = Array.from({ length: AGGREGATES }, (_, a) => `order-${a}`);
  // Every aggregate moving again, the victim's too: the survivor took them over.
  const recoveryMs = await recoveryTime(
    'survivor (effects)',
    endedAt,
    aggregates,
    async () => {
      const { rows } = await pg.pool.query<{ aggregate_id: string; n: string }>(
        `SELECT aggregate_id, count(*) AS n FROM "${pg.schema}".effects GROUP BY aggregate_id`,
      );
      return new Map(rows.map((row) => [row.aggregate_id, Number(row.n)]));
    },
    { perAggregate: PER_AGGREGATE },
  );
  await produced;

  // The survivor takes the victim's aggregates and finishes the work.
  const deadline = Date.now() + 120_000;
  while ((await effects()) < expected.size && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const report = await checkEffects(db, pg.schema, expected);
  // Killed early enough that the survivor had the victim's share of the work left to take over.
  expect(killedAt).toBeLessThan(total / 2);
  expect(report).toEqual({ effects: expected.size, lost: [], doubled: [], outOfOrder: [] });
  expect(victim.output + survivor.output).not.toContain('dead-lettered');
  console.log(
    `pulsar consumer SIGKILL, second consumer in the Key_Shared subscription: ${expected.size} events, ` +
      `killed after ${killedAt}, 0 lost, 0 doubled; every aggregate applied again ${recoveryMs} ms after the kill; ${machineLoad()}`,
  );
}, 240_000);
