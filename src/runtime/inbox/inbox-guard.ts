/**
 * The inbox guard: the inbox row and the handler's writes commit in ONE
 * transaction, so a message is either handled exactly once per consumer or not at all.
 */
import type { Database, Transaction } from '../db/database.js';
import { dialectOf } from '../db/sql-dialect.js';
import type { Envelope } from '../envelope.js';
import { InboxHandlerError } from './inbox-handler-error.js';
import { inboxTableName, type InboxTableOptions } from './inbox-tables.js';

/** `handled`: this call ran the handler and committed; `duplicate`: the consumer had already handled it. */
export type InboxOutcome = 'handled' | 'duplicate';

export interface InboxGuardOptions<E extends Envelope = Envelope> extends InboxTableOptions {
  /** The consumer's stable name; part of the inbox key, so two consumers each handle a message once. */
  readonly consumer: string;
  /** The message being handled; its `messageId` is the other part of the inbox key. */
  readonly envelope: E;
}

/** Business code run inside the guard; `tx` is the only handle it may write through. */
export type InboxHandler<E extends Envelope = Envelope> = (
  tx: Transaction,
  envelope: E,
) => Promise<void>;

/**
 * Runs `handler` at most once per (messageId, consumer). In one transaction: insert the inbox
 * row with ON CONFLICT DO NOTHING (the primary key is the arbiter, never a prior SELECT); no
 * row inserted → duplicate, commit without running the handler; otherwise run the handler on
 * the same transaction, stamp processed_at (PostgreSQL: in the INSERT, its now() being the
 * transaction's time) and commit. A concurrent delivery of the same message
 * waits on the uncommitted row and then sees a duplicate. Any failure rolls everything back,
 * inbox row included, and is rethrown as an InboxHandlerError carrying `retryable`.
 * Acknowledge the broker message only after this resolves.
 */
export async function handleWithInbox<E extends Envelope>(
  db: Database,
  options: InboxGuardOptions<E>,
  handler: InboxHandler<E>,
): Promise<InboxOutcome> {
  const table = inboxTableName(options, db.dialect);
  const { consumer, envelope } = options;
  try {
    return await db.transaction(async (tx) => {
      const claimed = await claimInboxRow(tx, table, envelope.messageId, consumer);
      if (!claimed) return 'duplicate';
      await handler(tx, envelope);
      await markProcessed(tx, table, envelope.messageId, consumer);
      return 'handled';
    });
  } catch (error) {
    throw error instanceof InboxHandlerError
      ? error
      : new InboxHandlerError(consumer, envelope.messageId, error);
  }
}

/** MySQL/MariaDB's error number for a duplicate key (ER_DUP_ENTRY). */
const MYSQL_DUPLICATE_KEY = 1062;

/**
 * Inserts the inbox row; false when it already existed (a duplicate). On MySQL/MariaDB a plain
 * INSERT whose duplicate-key error (and only that) means "already handled": INSERT IGNORE would
 * also turn other errors (a value too long, a bad value) into warnings and report the message
 * as new, and the affected-row count of ON DUPLICATE KEY UPDATE depends on the client's
 * CLIENT_FOUND_ROWS flag. The failed statement is undone on its own; the transaction goes on.
 */
export async function claimInboxRow(
  tx: Transaction,
  table: string,
  messageId: string,
  consumer: string,
): Promise<boolean> {
  if (dialectOf(tx).name === 'mysql') {
    try {
      await tx.query(
        `INSERT INTO ${table} (message_id, consumer, received_at) VALUES (?, ?, UTC_TIMESTAMP(3))`,
        [messageId, consumer],
      );
      return true;
    } catch (error) {
      if ((error as { errno?: unknown }).errno === MYSQL_DUPLICATE_KEY) return false;
      throw error;
    }
  }
  // processed_at is set here already: PostgreSQL's now() is the transaction's start time, the
  // value a later UPDATE would write, and the row is only ever seen committed (handler done) or
  // not at all. Saves the UPDATE's round trip and row version per message.
  const inserted = await tx.query(
    `INSERT INTO ${table} (message_id, consumer, processed_at) VALUES ($1, $2, now()) ON CONFLICT DO NOTHING RETURNING 1 AS claimed`,
    [messageId, consumer],
  );
  return inserted.rows.length === 1;
}

export async function markProcessed(
  tx: Transaction,
  table: string,
  messageId: string,
  consumer: string,
): Promise<void> {
  // On PostgreSQL claimInboxRow already wrote it (now() is fixed for the transaction); MySQL's
  // UTC_TIMESTAMP(3) is the statement's time, so the stamp comes after the handler.
  if (dialectOf(tx).name !== 'mysql') return;
  await tx.query(
    `UPDATE ${table} SET processed_at = UTC_TIMESTAMP(3) WHERE message_id = ? AND consumer = ?`,
    [messageId, consumer],
  );
}
