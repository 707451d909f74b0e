/**
 * A producing service in its own process, for the outbox fault-injection test.
 *
 * `<point>` mode: in one transaction it inserts the invoice row and writes the outbox event
 * (with the message id the parent chose and the next aggregate version), commits, then runs one relay round through a
 * publisher that records to the `published` table. At `<point>` it prints `reached <point>` and
 * waits on stdin, still holding whatever it holds (an open transaction, a lease), until the
 * parent SIGKILLs it. If the parent goes away first (stdin closes), it exits with code 3 instead
 * of lingering.
 * `restart` mode: a freshly started relay runs one round, prints `relayed <result JSON>` and exits 0.
 *
 * The database URL says the dialect: `postgres://…` or `mysql://…` (MariaDB).
 *
 * Usage: node --import <tsx loader> fault-service.ts <databaseUrl> <schema> <point|restart> <invoiceId> <messageId> <leaseMs>
 */
import {
  createOutboxRelay,
  openDatabase,
  writeOutboxEvent,
  type Database,
} from '../../../src/runtime/index.js';
import {
  databasePublisher,
  insertInvoice,
  invoiceIssuedV1,
  reachedMarker,
  type FaultPoint,
} from './fault-points.js';

const [url, schema, mode, invoiceId, messageId, leaseMs] = process.argv.slice(2) as [
  string,
  string,
  FaultPoint | 'restart',
  string,
  string,
  string,
];

/** Announces the kill point and parks here; only SIGKILL (or a vanished parent) ends the process. */
function haltAt(point: FaultPoint): Promise<void> {
  if (mode !== point) return Promise.resolve();
  process.stdout.write(`${reachedMarker(point)}\n`);
  process.stdin.on('end', () => process.exit(3));
  process.stdin.resume();
  return new Promise<void>(() => undefined);
}

const db = await openDatabase(url, { max: 3 });

// "The broker confirmed" = the publisher resolved. From then on, the next statement the relay
// sends (whatever it is: recording SENT) is where `after-confirm` stops the process.
let confirmed = false;
const recording = databasePublisher(db, schema, mode === 'restart' ? 'restarted-relay' : 'service');
const publisher = {
  async publish(message: Parameters<typeof recording.publish>[0]) {
    await recording.publish(message);
    confirmed = true;
  },
};
const relayDb: Database = {
  ...db,
  // The options too: the relay's PostgreSQL statements run prepared, as in a service.
  async query(text, params, options) {
    if (confirmed) await haltAt('after-confirm');
    return db.query(text, params, options);
  },
};
const relay = createOutboxRelay({
  db: relayDb,
  publisher,
  schema,
  leaseMs: Number(leaseMs),
  notifyChannel: false,
  concurrency: 1,
});

if (mode === 'restart') {
  const result = await relay.runOnce();
  process.stdout.write(`relayed ${JSON.stringify(result)}\n`);
  await db.close();
} else {
  const payload = { invoiceId, amount: 42 };
  await db.transaction(async (tx) => {
    await insertInvoice(tx, schema, payload);
    await haltAt('after-business-write');
    await writeOutboxEvent(
      tx,
      invoiceIssuedV1,
      payload,
      { messageId },
      { schema, notifyChannel: false, assignAggregateVersion: true },
    );
    await haltAt('after-outbox-write');
  });
  await haltAt('after-commit');
  await relay.runOnce();
  await haltAt('after-sent');
  throw new Error(`unknown kill point ${mode}`);
}
