/**
 * Child process for the SIGKILL test: runs the Kafka consumer runner with the generated
 * inventory-service consumer and kills itself (SIGKILL) right after the inbox transaction of the
 * target message committed — before the runner could commit the record's offset.
 *
 * argv: adapter brokers databaseUrl schema routesJson targetMessageId
 */
import pg from 'pg';
import { createKafkaConsumerRunner, migrateInbox, postgresDatabase } from 'evgen-runtime';
import { createInventoryServiceConsumer } from '../../../generated/consumers/inventory-service.js';
import { KAFKA_CLIENTS } from '../../support/kafka/test-kafka.js';

const [adapter, brokers, databaseUrl, schema, routesJson, target] = process.argv.slice(2);
const client = KAFKA_CLIENTS.find((c) => c.name === adapter)!.create({ brokers: [brokers!] });
const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
const db = postgresDatabase(pool);
await migrateInbox(db, { schema });
const consumer = createInventoryServiceConsumer({
  db,
  inbox: { schema: schema! },
  handlers: {
    'order.OrderCancelled': {
      1: async (envelope, ctx) => {
        await ctx.tx.query(
          `INSERT INTO "${schema}".effects (message_id, order_id) VALUES ($1, $2)`,
          [envelope.messageId, envelope.payload.orderId],
        );
      },
    },
    'order.OrderCreated': { 2: async () => undefined },
  },
});
const runner = createKafkaConsumerRunner({
  handler: {
    name: consumer.name,
    async handle(raw) {
      const outcome = await consumer.handle(raw);
      // The inbox row and the effect are committed; the offset is not.
      if ((raw as { messageId?: string }).messageId === target) {
        process.stdout.write('killing after inbox commit\n');
        process.kill(process.pid, 'SIGKILL');
      }
      return outcome;
    },
  },
  kafka: {
    client,
    routes: JSON.parse(routesJson!),
  },
});
await runner.start();
process.stdout.write('started\n');
