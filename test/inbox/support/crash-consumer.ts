/**
 * Child process for the consumer-side fault-injection test: handles one
 * delivery through an inbox-guarded consumer on the real PostgreSQL and SIGKILLs itself at the
 * requested point. Usage: crash-consumer.ts <databaseUrl> <schema> <envelopeJson> <killPoint>.
 */
import { createInboxConsumer, openDatabase, type Transaction } from '../../../src/runtime/index.js';
import { recordParcel, type KillPoint } from './kill-points.js';
import { parcelDescriptors } from './test-events.js';

function die(point: KillPoint): never {
  process.stdout.write(`killed at ${point}\n`);
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL cannot be caught; this only satisfies the type checker.
  throw new Error('unreachable');
}

async function main(): Promise<void> {
  const [url, schema, envelopeJson, point] = process.argv.slice(2) as [
    string,
    string,
    string,
    KillPoint,
  ];
  const db = await openDatabase(url, { max: 2 });
  const consumer = createInboxConsumer(
    { name: 'tracker', descriptors: parcelDescriptors },
    {
      db,
      inbox: { schema },
      handlers: {
        'parcel.ParcelSent': {
          2: async (envelope: { messageId: string }, ctx: { tx: Transaction }) => {
            if (point === 'after-inbox-insert') die(point);
            await recordParcel(ctx.tx, envelope.messageId, schema);
            if (point === 'after-business-write') die(point);
          },
        },
        'parcel.ParcelLost': { 1: async () => undefined },
      },
    },
  );
  if (point === 'before-transaction') die(point);
  await consumer.handle(envelopeJson);
  // Committed; the acknowledgement would come now.
  die('after-commit-before-ack');
}

await main();
