/**
 * A consumer group of runner processes on the real broker and the real PostgreSQL, for fault
 * tests that kill and restart members: its own schema (inbox + the effect oracle's `effects`),
 * its own prefixed topics (event topic, retry tiers, dead-letter topic) and group. Events are
 * OrderCreated envelopes with per-aggregate versions 1, 2, 3, …, keyed by aggregate.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import {
  createEnvelope,
  migrateInbox,
  postgresDatabase,
  type Database,
  type KafkaClient,
  type KafkaConnection,
  type KafkaProducer,
} from 'evgen/runtime';
import { envelopeToKafkaRecord } from '../../../src/runtime/kafka/kafka-record.js';
import type { KafkaConsumerRoutes } from '../../../src/runtime/kafka/consumer/kafka-consumer-types.js';
import {
  checkEffects,
  createEffectsTable,
  ORDER_EVENT,
  type OracleReport,
} from '../../support/effect-oracle.js';
import { createTestKafka, type TestKafka } from '../../support/kafka/test-kafka.js';
import { createTestSchema, TEST_DATABASE_URL, type TestSchema } from '../../support/postgres.js';
import { spawnTypeScript } from '../../support/typescript-child.js';
import { inventoryTopics } from './inventory-on-kafka.js';

const memberScript = fileURLToPath(new URL('./group-member.ts', import.meta.url));

export interface ConsumerGroupOptions {
  readonly adapter: {
    readonly name: string;
    readonly create: (connection: KafkaConnection) => KafkaClient;
  };
  readonly mode: 'plain' | 'ordered';
  readonly partitions: number;
  /** Delay of every handler call, ms. */
  readonly handlerDelayMs: number;
  readonly sessionTimeoutMs: number;
  readonly tiersMs?: readonly number[];
}

export interface Member {
  readonly process: ChildProcessWithoutNullStreams;
  /** The Kafka client id of its consumer (`member-<n>`): names it in the group's description. */
  readonly clientId: string;
  output: string;
}

export interface ConsumerGroup {
  readonly kafka: TestKafka;
  readonly pg: TestSchema;
  readonly db: Database;
  readonly routes: KafkaConsumerRoutes;
  /** messageId → aggregateId of every event published. */
  readonly expected: Map<string, string>;
  /**
   * Publishes `count` events round-robin over `aggregates` aggregates (versions continue), in
   * sends of `batch`, one send every `intervalMs` (a steady stream the members keep up with).
   */
  publish(
    count: number,
    aggregates: number,
    pace?: { batch: number; intervalMs: number },
  ): Promise<void>;
  /** Starts a member; resolves once it printed `ready`. */
  start(): Promise<Member>;
  /** SIGKILLs a member; resolves when it is gone. */
  kill(member: Member): Promise<void>;
  /** SIGTERMs a member; resolves with the stop() time it printed. */
  terminate(member: Member): Promise<number>;
  effectCount(): Promise<number>;
  /** Waits until `count` effects exist; fails when no new effect came for `stallMs`. */
  waitForEffects(count: number, stallMs: number): Promise<void>;
  check(): Promise<OracleReport>;
  /** Records on the dead-letter topic. */
  deadLetters(): Promise<number>;
  /** Whether the group's committed offsets reached the end of every event-topic partition. */
  committedToEnd(): Promise<boolean>;
  /** `partition committed/end` of the event topic, for failure messages. */
  describeOffsets(): Promise<string>;
  /**
   * The group's state and its members' client ids (sorted) as the broker's coordinator reports
   * them (kafkajs DescribeGroups, whatever adapter the members use). A SIGKILLed member stays
   * listed until its session times out.
   */
  groupState(): Promise<{ state: string; clientIds: string[] }>;
  cleanup(): Promise<void>;
}

export async function consumerGroup(options: ConsumerGroupOptions): Promise<ConsumerGroup> {
  const kafka = await createTestKafka(options.adapter.create);
  const client = options.adapter.create({ brokers: [kafka.brokers] });
  const pg = await createTestSchema('evgen_kafka_group');
  const db = postgresDatabase(pg.pool);
  await migrateInbox(db, { schema: pg.schema });
  await createEffectsTable(db, pg.schema);
  const routes = await inventoryTopics(kafka, options.partitions, options.tiersMs ?? [200, 500], 2);
  const topic = routes.topics[0];
  const deadLetter = routes.deadLetter;
  let producer: KafkaProducer | undefined;
  const expected = new Map<string, string>();
  const versions = new Map<string, number>();
  const members = new Set<Member>();
  /** A kafkajs admin for DescribeGroups (evgen's admin interface has no use for it). */
  let describer: kafkajs.Admin | undefined;
  let started = 0;
  const effectCount = async () =>
    Number(
      (await db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${pg.schema}".effects`))
        .rows[0]!.n,
    );

  const gone = (member: Member) =>
    member.process.exitCode !== null || member.process.signalCode !== null;
  const kill = async (member: Member) => {
    members.delete(member);
    if (gone(member)) return;
    const exited = new Promise((resolve) => member.process.once('exit', resolve));
    member.process.kill('SIGKILL');
    await exited;
  };

  return {
    kafka,
    pg,
    db,
    routes,
    expected,
    async publish(count, aggregates, pace = { batch: 100, intervalMs: 0 }) {
      producer ??= await client.producer({ timeoutMs: 30_000 });
      const batch = [];
      const begin = Date.now();
      let sends = 0;
      for (let i = 0; i < count; i++) {
        const orderId = `order-${i % aggregates}`;
        const version = (versions.get(orderId) ?? 0) + 1;
        versions.set(orderId, version);
        const envelope = createEnvelope(
          ORDER_EVENT,
          { orderId, seq: version },
          { aggregateVersion: version },
        );
        expected.set(envelope.messageId, orderId);
        batch.push(envelopeToKafkaRecord(envelope, topic!));
        if (batch.length === pace.batch || i === count - 1) {
          await producer.send(batch.splice(0));
          const due = begin + ++sends * pace.intervalMs;
          if (due > Date.now())
            await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
        }
      }
    },
    async start() {
      const clientId = `member-${++started}`;
      const member: Member = {
        process: spawnTypeScript(
          memberScript,
          [
            options.adapter.name,
            kafka.brokers,
            TEST_DATABASE_URL,
            pg.schema,
            JSON.stringify(routes),
            options.mode,
            String(options.handlerDelayMs),
            String(options.sessionTimeoutMs),
            clientId,
          ],
          'ignore',
        ),
        clientId,
        output: '',
      };
      members.add(member);
      member.process.stdout.on('data', (chunk: Buffer) => (member.output += chunk.toString()));
      member.process.stderr.on('data', (chunk: Buffer) => (member.output += chunk.toString()));
      await new Promise<void>((resolve, reject) => {
        const onData = () => {
          if (member.output.includes('ready\n')) resolve();
        };
        member.process.stdout.on('data', onData);
        member.process.once('exit', (code, signal) =>
          reject(new Error(`group member exited early (${code ?? signal}): ${member.output}`)),
        );
      });
      return member;
    },
    kill,
    async terminate(member) {
      members.delete(member);
      const exited = new Promise((resolve) => member.process.once('exit', resolve));
      member.process.kill('SIGTERM');
      await exited;
      const stopped = /stopped in (\d+)/.exec(member.output);
      if (!stopped) throw new Error(`member did not report its stop: ${member.output}`);
      return Number(stopped[1]);
    },
    effectCount,
    async waitForEffects(count, stallMs) {
      let last = -1;
      let lastChange = Date.now();
      for (;;) {
        const now = await effectCount();
        if (now >= count) return;
        if (now !== last) {
          last = now;
          lastChange = Date.now();
        } else if (Date.now() - lastChange > stallMs) {
          throw new Error(`stalled: ${now} of ${count} effects, none new for ${stallMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    check: () => checkEffects(db, pg.schema, expected),
    async deadLetters() {
      const [only] = await kafka.admin.topicOffsets(deadLetter);
      return Number(BigInt(only!.end) - BigInt(only!.start));
    },
    async describeOffsets() {
      const [ends, committed] = await Promise.all([
        kafka.admin.topicOffsets(topic!),
        kafka.admin.committedOffsets(routes.groupId, topic!),
      ]);
      return ends.map((p) => `${p.partition} ${committed.get(p.partition)}/${p.end}`).join(', ');
    },
    async committedToEnd() {
      const [ends, committed] = await Promise.all([
        kafka.admin.topicOffsets(topic!),
        kafka.admin.committedOffsets(routes.groupId, topic!),
      ]);
      return ends.every((p) => committed.get(p.partition) === p.end);
    },
    async groupState() {
      if (describer === undefined) {
        describer = new kafkajs.Kafka({
          brokers: [kafka.brokers],
          logLevel: kafkajs.logLevel.NOTHING,
        }).admin();
        await describer.connect();
      }
      const { groups } = await describer.describeGroups([routes.groupId]);
      const group = groups[0]!;
      return { state: group.state, clientIds: group.members.map((m) => m.clientId).sort() };
    },
    async cleanup() {
      await Promise.all([...members].map((member) => kill(member)));
      await describer?.disconnect().catch(() => undefined);
      await producer?.close().catch(() => undefined);
      await kafka.admin.deleteGroups([routes.groupId]).catch(() => undefined);
      try {
        await kafka.cleanup();
      } finally {
        await pg.drop();
      }
    },
  };
}
