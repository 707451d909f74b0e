/**
 * The consumer benches' baseline: what a hand-written consumer does for one stock-counted message
 * with an inbox, in plain SQL on its own connection (claim the id stamped processed, write the
 * effect, one transaction: as evgen's PostgreSQL inbox guard), so the runner's rate is compared with the same database work.
 */
import type pg from 'pg';
import type { Envelope } from '../../src/runtime/index.js';
import type { StockCounted } from './stock-counted.js';

export async function rawInboxHandle(
  pool: pg.Pool,
  schema: string,
  consumer: string,
  envelope: Envelope,
): Promise<void> {
  const payload = envelope.payload as StockCounted;
  const connection = await pool.connect();
  try {
    await connection.query('BEGIN');
    const claimed = await connection.query(
      `INSERT INTO "${schema}".inbox_message (message_id, consumer, processed_at) VALUES ($1, $2, now()) ON CONFLICT DO NOTHING RETURNING 1`,
      [envelope.messageId, consumer],
    );
    if (claimed.rows.length === 1) {
      await connection.query(
        `INSERT INTO "${schema}".stock_count (sku, quantity, message_id) VALUES ($1, $2, $3)`,
        [payload.sku, payload.quantity, envelope.messageId],
      );
    }
    await connection.query('COMMIT');
  } finally {
    connection.release();
  }
}
