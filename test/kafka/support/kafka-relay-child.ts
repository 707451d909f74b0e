/**
 * A relay to Kafka in its own process, for the kill test: it claims the outbox, publishes through
 * kafkaRelayPublisher and, once the broker acknowledged a record, prints `acked <messageId>` and
 * never returns from publish(), so the row is never marked SENT. The parent SIGKILLs it there.
 * Usage: tsx kafka-relay-child.ts <database-url> <schema> <lease-ms> <adapter> <brokers> <prefix> <event-type> <topic>
 */
import pg from 'pg';
import {
  createOutboxRelay,
  kafkaRelayPublisher,
  postgresDatabase,
} from '../../../src/runtime/index.js';
import { kafkajsClient } from '../../../src/runtime/kafkajs.js';
import { platformaticClient } from '../../../src/runtime/platformatic-kafka.js';

const [url, schema, leaseMs, adapter, brokers, prefix, eventType, topic] = process.argv.slice(2);
const client = (adapter === 'kafkajs' ? kafkajsClient : platformaticClient)({
  brokers: [brokers!],
});
const producer = await client.producer();
const inner = kafkaRelayPublisher(producer, { [eventType!]: { topic: topic! } }, { prefix });
const pool = new pg.Pool({ connectionString: url, max: 2 });
const relay = createOutboxRelay({
  db: postgresDatabase(pool),
  schema: schema!,
  leaseMs: Number(leaseMs),
  notifyChannel: false,
  concurrency: 1,
  publisher: {
    async publish(message) {
      await inner.publish(message);
      process.stdout.write(`acked ${message.envelope.messageId}\n`);
      return new Promise<void>(() => undefined);
    },
  },
});
void relay.runOnce();
