/**
 * A relay in its own process, for the crash test: it claims a batch, reports the claimed
 * message ids on stdout and then hangs in publish() until the parent SIGKILLs it.
 * Usage: tsx relay-child.ts <database-url> <schema> <lease-ms> (postgres:// or mysql://)
 */
import {
  createOutboxRelay,
  openDatabase,
  type OutboundMessage,
} from '../../../src/runtime/index.js';

const [url, schema, leaseMs] = process.argv.slice(2);
const db = await openDatabase(url, { max: 2 });
const seen: string[] = [];
const relay = createOutboxRelay({
  db,
  schema: schema!,
  leaseMs: Number(leaseMs),
  notifyChannel: false,
  concurrency: 1,
  publisher: {
    publish(message: OutboundMessage) {
      seen.push(message.envelope.messageId);
      process.stdout.write(`publishing ${message.envelope.messageId}\n`);
      return new Promise<void>(() => undefined);
    },
  },
});
void relay.runOnce();
