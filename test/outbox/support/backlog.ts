/**
 * A long backlog for claim tests and benches, on PostgreSQL (and PGlite) or MariaDB: 1 000 SENT
 * rows of as many aggregates (history), then `rows` READY rows of `aggregates` aggregates, round
 * robin (`o0`, `o1`, …), written in one statement.
 */
import type { Database } from '../../../src/runtime/index.js';

export async function insertBacklog(
  db: Database,
  schema: string,
  backlog: { readonly aggregates: number; readonly rows: number },
): Promise<void> {
  const table = db.dialect.qualifiedName(schema, 'outbox_event');
  const mysql = db.dialect.name === 'mysql';
  const total = 1_000 + backlog.rows;
  const aggregate = mysql
    ? `IF(g <= 1000, CONCAT('old-', g), CONCAT('o', g % ${backlog.aggregates}))`
    : `CASE WHEN g <= 1000 THEN 'old-' || g ELSE 'o' || (g % ${backlog.aggregates}) END`;
  const status = `CASE WHEN g <= 1000 THEN 'SENT' ELSE 'READY' END`;
  await db.query(
    mysql
      ? `INSERT INTO ${table} (event_id, aggregate_type, aggregate_id, event_type, schema_version,
           payload, occurred_at, headers, status, available_at, created_at, sent_at)
         SELECT UUID(), 'order', ${aggregate}, 'OrderPlaced', 1, '{}', UTC_TIMESTAMP(3), '{}', ${status},
           UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), IF(g <= 1000, UTC_TIMESTAMP(3), NULL)
         FROM (SELECT seq AS g FROM seq_1_to_${total}) s`
      : `INSERT INTO ${table} (event_id, aggregate_type, aggregate_id, event_type, schema_version,
           payload, occurred_at, status, sent_at)
         SELECT gen_random_uuid(), 'order', ${aggregate}, 'OrderPlaced', 1, '{}', now(), ${status},
           CASE WHEN g <= 1000 THEN now() END
         FROM generate_series(1, ${total}) g`,
  );
}
