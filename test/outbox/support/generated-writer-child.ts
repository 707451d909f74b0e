/**
 * Uses a generated `order/order-created/outbox.ts` the way a service would, in plain Node (the
 * generated ajv validators import CommonJS helpers, which Node resolves natively). Writes one
 * valid OrderCreated v2 with a business row in one transaction and tries one invalid payload,
 * then prints `{ envelope, violations }` as JSON on stdout. The URL says the dialect
 * (`postgres://…` or `mysql://…`).
 * Usage: tsx generated-writer-child.ts <outbox.ts path> <database-url> <schema> <payload JSON>
 */
import { pathToFileURL } from 'node:url';
import {
  openDatabase,
  ValidationError,
  type Envelope,
  type Transaction,
} from '../../../src/runtime/index.js';
import { dialectOf } from '../../../src/runtime/db/sql-dialect.js';

type Writer = (
  tx: Transaction,
  payload: unknown,
  context?: object,
  options?: object,
) => Promise<Envelope>;

const [modulePath, url, schema, payloadJson] = process.argv.slice(2);
const module = (await import(pathToFileURL(modulePath!).href)) as Record<string, Writer>;
const writeOrderCreatedV2 = module.writeOrderCreatedV2!;
const db = await openDatabase(url, { max: 1 });
const { qualifiedName, param } = dialectOf(db);
const payload = JSON.parse(payloadJson!) as Record<string, unknown>;
try {
  const envelope = await db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO ${qualifiedName(schema, 'orders')} (order_id) VALUES (${param(1)})`,
      [payload.orderId],
    );
    return writeOrderCreatedV2(
      tx,
      payload,
      { traceId: 'trace-1' },
      { schema, assignAggregateVersion: true },
    );
  });
  let violations: string[] = [];
  try {
    await db.transaction((tx) =>
      writeOrderCreatedV2(tx, { ...payload, channel: 'fax', surprise: 1 }, {}, { schema }),
    );
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    violations = error.violations.map((v) => v.pointer).sort();
  }
  process.stdout.write(JSON.stringify({ envelope, violations }));
} finally {
  await db.close();
}
