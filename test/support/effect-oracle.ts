/**
 * The outage tests' oracle: a consumer whose business effect is one row per handled message in
 * `effects`, applied through `ctx.inOrder` (per-aggregate order by aggregateVersion) inside the
 * inbox transaction. Counting those rows per messageId and reading them in commit order tells
 * whether anything was lost, applied twice or applied out of order. The SQL follows the
 * database's dialect (PostgreSQL or MySQL/MariaDB, where a schema is a database).
 */
// Relative imports of the sources (not the runtime index), so child processes run it under plain node.
import type { Database, Queryable } from '../../src/runtime/db/database.js';
import { dialectOf } from '../../src/runtime/db/sql-dialect.js';
import type { Envelope, EventVersionDescriptor } from '../../src/runtime/envelope.js';
import {
  createInboxConsumer,
  type ConsumerHandler,
  type InboxConsumer,
} from '../../src/runtime/inbox/consumer.js';

/** An OrderPlaced-like event whose aggregate is the payload's orderId. */
export interface OrderEventPayload {
  readonly orderId: string;
  readonly seq: number;
}

export const ORDER_EVENT: EventVersionDescriptor<'order.OrderCreated', 1, OrderEventPayload> = {
  eventType: 'order.OrderCreated',
  schemaVersion: 1,
  aggregateType: 'Order',
  aggregateIdProperty: 'orderId',
  validatePayload: (payload) => ({ ok: true, value: payload as OrderEventPayload }),
  readPayload: (payload) => ({ ok: true, value: payload as OrderEventPayload }),
};

const effectsTable = (db: Queryable, schema: string) =>
  dialectOf(db).qualifiedName(schema, 'effects');

/** Creates `effects` in `schema` (the inbox tables are migrated separately). */
export async function createEffectsTable(db: Database, schema: string): Promise<void> {
  await db.query(
    dialectOf(db).name === 'mysql'
      ? `CREATE TABLE IF NOT EXISTS ${effectsTable(db, schema)} (
       seq BIGINT AUTO_INCREMENT PRIMARY KEY,
       message_id VARCHAR(64) NOT NULL, aggregate_id VARCHAR(255) NOT NULL, version BIGINT NOT NULL)`
      : `CREATE TABLE IF NOT EXISTS ${effectsTable(db, schema)} (
       seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       message_id TEXT NOT NULL, aggregate_id TEXT NOT NULL, version BIGINT NOT NULL)`,
  );
}

/**
 * The inbox-guarded consumer that records one effect per message, in aggregate order (through
 * `ctx.inOrder`), or with `ordered: false` as it comes (inbox dedup only).
 */
export function effectConsumer(
  db: Database,
  schema: string,
  name = 'inventory-service',
  poison?: (payload: OrderEventPayload) => boolean,
  { ordered = true }: { readonly ordered?: boolean } = {},
): InboxConsumer {
  return createInboxConsumer(
    { name, descriptors: [ORDER_EVENT] },
    {
      db,
      inbox: { schema },
      handlers: {
        'order.OrderCreated': {
          1: (async (envelope, ctx) => {
            if (poison?.(envelope.payload)) throw new Error(`poison ${envelope.payload.orderId}`);
            const apply = async () => {
              const { param } = dialectOf(ctx.tx);
              await ctx.tx.query(
                `INSERT INTO ${effectsTable(ctx.tx, schema)} (message_id, aggregate_id, version) VALUES (${param(1)}, ${param(2)}, ${param(3)})`,
                [envelope.messageId, envelope.aggregateId, envelope.aggregateVersion],
              );
            };
            if (ordered) await ctx.inOrder(apply);
            else await apply();
          }) satisfies ConsumerHandler<Envelope<'order.OrderCreated', 1, OrderEventPayload>>,
        },
      },
    },
  );
}

export interface OracleReport {
  readonly effects: number;
  /** Expected messages with no effect. */
  readonly lost: string[];
  /** Messages with more than one effect. */
  readonly doubled: string[];
  /** Aggregates whose effects are not in version order 1, 2, 3, … */
  readonly outOfOrder: string[];
}

/** Compares the effects with what was published (messageId → aggregate). */
export async function checkEffects(
  db: Database,
  schema: string,
  expected: ReadonlyMap<string, string>,
  exclude: ReadonlySet<string> = new Set(),
): Promise<OracleReport> {
  const { rows } = await db.query<{ message_id: string; aggregate_id: string; version: string }>(
    `SELECT message_id, aggregate_id, CAST(version AS ${dialectOf(db).name === 'mysql' ? 'CHAR' : 'text'}) AS version FROM ${effectsTable(db, schema)} ORDER BY seq`,
  );
  const counts = new Map<string, number>();
  const versions = new Map<string, number[]>();
  for (const row of rows) {
    counts.set(row.message_id, (counts.get(row.message_id) ?? 0) + 1);
    const list = versions.get(row.aggregate_id) ?? [];
    list.push(Number(row.version));
    versions.set(row.aggregate_id, list);
  }
  const lost = [...expected.keys()].filter((id) => !counts.has(id) && !exclude.has(id));
  const doubled = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
  const outOfOrder = [...versions]
    .filter(([, list]) => list.some((version, index) => version !== index + 1))
    .map(([aggregate]) => aggregate);
  return { effects: rows.length, lost, doubled, outOfOrder };
}
